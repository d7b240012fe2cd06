public import CredentialVault
public import Foundation

/// A client that sends FHIR requests with an always-fresh access token to one FHIR server: ``SMARTClient`` (an app
/// acting for its user) and ``SMARTBackendClient`` (a backend service). The requests themselves (``getJSON(at:)``,
/// ``read(_:id:)``, ``search(_:allPages:)``, ``getData(from:accept:)``, ``authorizing(_:)``) are written once, here.
public protocol FHIRAccess: Actor {
    /// The FHIR server: every request goes there, and the access token nowhere else.
    nonisolated var fhirBase: URL { get }
    /// How the requests are sent.
    nonisolated var fhirConnection: FHIRConnection { get }
    /// An access token, fresh for the leeway; with `forceRefresh` a new one (after the server refused the last).
    func accessToken(forceRefresh: Bool) async throws(VaultError) -> AccessToken
}
