import NIOConcurrencyHelpers

/// The server's address, known once the listener is bound.
final class ServerAddress: Sendable {
    private let issuerValue = NIOLockedValueBox<String>("")

    /// `{baseURL}/auth/realms/{realm}`, without a trailing slash.
    var issuer: String {
        get { issuerValue.withLockedValue { $0 } }
        set { issuerValue.withLockedValue { $0 = newValue } }
    }
}
