import Foundation

/// A refresh token, the user it belongs to, and the session context sealed with it.
///
/// Refresh tokens may be JWTs (Keycloak, KeyServiceMock) or opaque strings (many other issuers),
/// so the user id travels beside the token. `description` shows neither the token nor the context.
public struct RefreshToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token as the issuer sent it. A secret: never log it.
    public let token: String
    /// The user it belongs to (the `sub` of the id token, or the name the caller gave).
    public let userId: String
    /// What the issuer sent beside the tokens and the app chose to keep with them (a SMART launch context:
    /// `patient`, `encounter`, `fhirContext`, the granted `scope`, ...), sealed in the same envelope as the
    /// token. Empty when there is none.
    public let context: [String: JSONValue]

    /// A refresh token of `userId`, with the session context to seal beside it.
    public init(token: String, userId: String, context: [String: JSONValue] = [:]) {
        self.token = token
        self.userId = userId
        self.context = context
    }

    /// A refresh token that is itself a JWT (Keycloak, KeyServiceMock): the user is its `sub`.
    public init(jwt: JWT) {
        self.init(token: jwt.token, userId: jwt.userId)
    }

    /// The token decoded as a JWT, when it is one (THP's refresh tokens are `THPJWT`s); nil for opaque tokens.
    public var jwt: JWT? { try? JWT(token: token) }

    /// The same login with another token (a rotation); the context stays.
    func replacingToken(_ token: String) -> RefreshToken {
        RefreshToken(token: token, userId: userId, context: context)
    }

    /// The same token with `fields` laid over the context: a field named there replaces the stored one, a field
    /// not named stays as it was (a refresh answer that omits the launch context keeps it).
    func addingContext(_ fields: [String: JSONValue]) -> RefreshToken {
        RefreshToken(token: token, userId: userId, context: context.merging(fields) { _, new in new })
    }

    public var description: String {
        "RefreshToken(userId: \(userId), token: redacted, context: \(context.count) fields)"
    }
    public var debugDescription: String { description }
}
