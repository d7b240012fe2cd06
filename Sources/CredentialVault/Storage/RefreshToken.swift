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

    /// A refresh token that is itself a JWT (Keycloak, KeyServiceMock): the user is its `sub`.
    public init(jwt: JWT) {
        self.init(token: jwt.token, userId: jwt.userId)
    }

    /// The token decoded as a JWT, when it is one (THP's refresh tokens are `THPJWT`s); nil for opaque tokens.
    public var jwt: JWT? { try? JWT(token: token) }

    public var description: String { "RefreshToken(userId: \(userId), token: redacted)" }
    public var debugDescription: String { description }
}
