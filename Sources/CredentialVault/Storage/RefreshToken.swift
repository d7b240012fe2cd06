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
    /// How the user authenticated for this login (`acr`, `amr`, `auth_time` of its latest id token), sealed with
    /// the token; nil for a login without an id token.
    public let loginContext: LoginContext?
    /// The login's latest id token, sealed with the token for `id_token_hint` (``Auth/endSessionURL()``), as sealed:
    /// it may not read as a JWT (a stricter parser in a later version), so it is read through ``Auth/idToken``.
    /// Personal data: never shown, never logged.
    let idToken: String?

    /// A refresh token of `userId`, with the session context, the registered client, the DPoP key and the login
    /// context to seal beside it.
    public init(
        token: String,
        userId: String,
        context: [String: JSONValue] = [:],
        client: ClientRegistration? = nil,
        dpopKey: DPoPKey? = nil,
        loginContext: LoginContext? = nil
    ) {
        self.init(
            token: token,
            userId: userId,
            context: context,
            client: client,
            dpopKey: dpopKey,
            loginContext: loginContext,
            idToken: nil
        )
    }

    /// A refresh token with everything sealed beside it, the login's id token included.
    init(
        token: String,
        userId: String,
        context: [String: JSONValue],
        client: ClientRegistration?,
        dpopKey: DPoPKey?,
        loginContext: LoginContext?,
        idToken: String?
    ) {
        self.token = token
        self.userId = userId
        self.context = context
        self.client = client
        self.dpopKey = dpopKey
        self.loginContext = loginContext
        self.idToken = idToken
    }

    /// A refresh token that is itself a JWT (Keycloak, KeyServiceMock): the user is its `sub`.
    public init(jwt: JWT) {
        self.init(token: jwt.token, userId: jwt.userId)
    }

    /// The token decoded as a JWT, when it is one (THP's refresh tokens are `THPJWT`s); nil for opaque tokens.
    public var jwt: JWT? { try? JWT(token: token) }

    /// The same login with another token (a rotation); the context stays.
    func replacingToken(_ token: String) -> RefreshToken {
        copy(token: token)
    }

    /// The same login with its registered client replaced (a key rotation).
    func replacingClient(_ client: ClientRegistration) -> RefreshToken {
        copy(client: client)
    }

    /// The same login with a newer id token of it and what that says of the authentication.
    func replacingIDToken(_ idToken: String, context loginContext: LoginContext) -> RefreshToken {
        copy(loginContext: loginContext, idToken: idToken)
    }

    /// This token with the fields given replaced.
    private func copy(
        token: String? = nil,
        context: [String: JSONValue]? = nil,
        client: ClientRegistration? = nil,
        loginContext: LoginContext? = nil,
        idToken: String? = nil
    ) -> RefreshToken {
        RefreshToken(
            token: token ?? self.token,
            userId: userId,
            context: context ?? self.context,
            client: client ?? self.client,
            dpopKey: dpopKey,
            loginContext: loginContext ?? self.loginContext,
            idToken: idToken ?? self.idToken
        )
    }

    /// The same token with `fields` laid over the context: a field named there replaces the stored one, a field
    /// not named stays as it was (a refresh answer that omits the launch context keeps it).
    func addingContext(_ fields: [String: JSONValue]) -> RefreshToken {
        copy(context: context.merging(fields) { _, new in new })
    }

    /// The user id and what the token carries, never the token or the id token.
    public var description: String {
        "RefreshToken(userId: \(userId), token: redacted, context: \(context.count) fields, "
            + "client: \(client.map { "registered \($0.clientId)" } ?? "configured"), "
            + "dpop: \(dpopKey == nil ? "none" : "bound"), "
            + "login context: \(loginContext == nil ? "none" : "kept"), id token: \(idToken == nil ? "none" : "redacted"))"
    }
    /// The same as ``description``: nothing secret.
    public var debugDescription: String { description }

    /// A mirror without the token, so `dump` and debuggers show none.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "userId": userId, "contextFields": context.count, "client": client as Any, "dpop": dpopKey != nil,
                "loginContext": loginContext != nil, "idToken": idToken == nil ? "none" : "redacted",
            ],
            displayStyle: .struct
        )
    }
}
