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
    /// An access token, fresh for the leeway; with `forceRefresh` a new one (after the server refused the last). The
    /// same verb as ``Auth/getAccessToken(forceRefresh:)`` (THP's name), so one operation has one name in both modules.
    func getAccessToken(forceRefresh: Bool) async throws(VaultError) -> AccessToken
    /// The DPoP proof (RFC 9449) for one `method` request to `url` with `accessToken`, when the token is bound to a
    /// key; nil for a bearer token. Written once in `FHIRAccess+DPoP.swift` for clients without keys.
    func dpopProof(method: String, url: URL, accessToken: AccessToken) async throws(VaultError) -> String?
    /// Keeps a `DPoP-Nonce` the FHIR server gave; true when `response` refused for want of it (`use_dpop_nonce`).
    func rememberDPoPNonce(from response: HTTPResponse, for url: URL) async -> Bool
}
