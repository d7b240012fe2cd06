import Foundation

/// An authorization code waiting to be exchanged.
struct AuthorizationCode: Sendable {
    let clientId: String
    let redirectURI: String
    let scope: String
    let nonce: String?
    /// `nil` only where PKCE is optional: a SMART mode that does not offer S256.
    let codeChallenge: String?
    /// `S256`, or `plain` where S256 is not offered.
    let codeChallengeMethod: String
    let user: MockUser
    let expiresAt: Date
    /// The SMART launch context the authorization selected; `nil` outside the SMART mode.
    let launch: LaunchContext?
    /// Set once the code is exchanged; a second exchange revokes this session (RFC 6749 section 4.1.2).
    var sessionId: String?
}
