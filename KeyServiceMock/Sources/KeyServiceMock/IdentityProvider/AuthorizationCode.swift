import Foundation

/// An authorization code waiting to be exchanged.
struct AuthorizationCode: Sendable {
    let clientId: String
    let redirectURI: String
    let scope: String
    let nonce: String?
    let codeChallenge: String
    let user: MockUser
    let expiresAt: Date
    /// Set once the code is exchanged; a second exchange revokes this session (RFC 6749 section 4.1.2).
    var sessionId: String?
}
