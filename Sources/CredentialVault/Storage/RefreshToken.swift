import Foundation

/// A refresh token and the user it belongs to.
///
/// Refresh tokens may be JWTs (Keycloak, KeyServiceMock) or opaque strings (many other issuers),
/// so the user id travels beside the token. `description` never shows the token.
public struct RefreshToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token as the issuer sent it. A secret: never log it.
    public let token: String
    /// The user it belongs to (the `sub` of the id or access token).
    public let userId: String

    /// A refresh token of `userId`.
    public init(token: String, userId: String) {
        self.token = token
        self.userId = userId
    }

    public var description: String { "RefreshToken(userId: \(userId), token: redacted)" }
    public var debugDescription: String { description }
}
