import Foundation

/// A refresh token, the user it belongs to, and the session context sealed with it.
///
/// Refresh tokens may be JWTs (Keycloak, KeyServiceMock) or opaque strings (many other issuers),
/// so the user id travels beside the token. `description` and `dump` show neither the token nor the context.
public struct RefreshToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The token as the issuer sent it. A secret: never log it.
    public let token: String
    /// The user it belongs to (the `sub` of the id token, or the name the caller gave).
    public let userId: String
    /// What the issuer sent beside the tokens and the app chose to keep with them (a SMART launch context:
    /// `patient`, `encounter`, `fhirContext`, the granted `scope`, ...), sealed in the same envelope as the
    /// token. Empty when there is none.
    public let context: [String: JSONValue]
    /// The client this library registered at the issuer for this login (RFC 7591), sealed with the token; nil for a
    /// configured client id.
    public let client: ClientRegistration?
    /// The key this login's tokens are bound to (DPoP, RFC 9449), sealed with the token; nil for bearer tokens.
    public let dpopKey: DPoPKey?

    /// A refresh token of `userId`, with the session context, the registered client and the DPoP key to seal
    /// beside it.
    public init(
        token: String,
        userId: String,
        context: [String: JSONValue] = [:],
        client: ClientRegistration? = nil,
        dpopKey: DPoPKey? = nil
    ) {
        self.token = token
        self.userId = userId
        self.context = context
        self.client = client
        self.dpopKey = dpopKey
    }

    /// A refresh token that is itself a JWT (Keycloak, KeyServiceMock): the user is its `sub`.
    public init(jwt: JWT) {
        self.init(token: jwt.token, userId: jwt.userId)
    }

    /// The token decoded as a JWT, when it is one (THP's refresh tokens are `THPJWT`s); nil for opaque tokens.
    public var jwt: JWT? { try? JWT(token: token) }

    /// The same login with another token (a rotation); the context stays.
    func replacingToken(_ token: String) -> RefreshToken {
        RefreshToken(token: token, userId: userId, context: context, client: client, dpopKey: dpopKey)
    }

    /// The same login with its registered client replaced (a key rotation).
    func replacingClient(_ client: ClientRegistration) -> RefreshToken {
        RefreshToken(token: token, userId: userId, context: context, client: client, dpopKey: dpopKey)
    }

    /// The same token with `fields` laid over the context: a field named there replaces the stored one, a field
    /// not named stays as it was (a refresh answer that omits the launch context keeps it).
    func addingContext(_ fields: [String: JSONValue]) -> RefreshToken {
        RefreshToken(
            token: token,
            userId: userId,
            context: context.merging(fields) { _, new in new },
            client: client,
            dpopKey: dpopKey
        )
    }

    public var description: String {
        "RefreshToken(userId: \(userId), token: redacted, context: \(context.count) fields, "
            + "client: \(client.map { "registered \($0.clientId)" } ?? "configured"), "
            + "dpop: \(dpopKey == nil ? "none" : "bound"))"
    }
    public var debugDescription: String { description }

    /// A mirror without the token, so `dump` and debuggers show none.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "userId": userId, "contextFields": context.count, "client": client as Any, "dpop": dpopKey != nil,
            ],
            displayStyle: .struct
        )
    }
}
