import NIOConcurrencyHelpers

/// The server's address, known once the listener is bound.
final class ServerAddress: Sendable {
    private let issuerValue = NIOLockedValueBox<String>("")
    private let baseURLValue = NIOLockedValueBox<String>("")

    /// `http://HOST:PORT`, without a trailing slash.
    var baseURL: String {
        get { baseURLValue.withLockedValue { $0 } }
        set { baseURLValue.withLockedValue { $0 = newValue } }
    }

    /// `{baseURL}/fhir/r4`: the SMART mode's FHIR base, without a trailing slash.
    var fhirBase: String { baseURL + Layout.fhirBase }

    /// `{baseURL}/auth/realms/{realm}`, without a trailing slash.
    var issuer: String {
        get { issuerValue.withLockedValue { $0 } }
        set { issuerValue.withLockedValue { $0 = newValue } }
    }
}
