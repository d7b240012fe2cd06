import Foundation

/// What the server remembers of an opaque SMART access token; the token itself is kept only as its keyed hash.
struct OpaqueAccessToken: Sendable {
    let clientId: String
    /// The user it was issued for; for a backend client's `client_credentials` grant, the client id.
    let subject: String
    /// The session (refresh-token family) it was issued for: ending the session ends the token too. `nil` for
    /// a backend client's token, which has no session and lives until it expires or is revoked.
    let sessionId: String?
    /// The granted scope, which the FHIR endpoint checks.
    let scope: String
    let patient: String?
    let expiresAt: Date
}
