public import Foundation

/// A client registered at run time by OAuth 2.0 Dynamic Client Registration (RFC 7591), as the server holds it
/// now: its metadata after the last RFC 7592 update, without its secret or registration access token.
///
/// Read it with ``KeyServiceMockServer/registeredClient(_:)``, for example to see that a client published a
/// rotated key.
public struct RegisteredClient: Sendable, Equatable {
    /// The `client_id` the server issued.
    public let clientId: String
    /// When the client was registered (`client_id_issued_at`), by the server's clock.
    public let clientIdIssuedAt: Date
    /// How the client authenticates at the token, revocation and introspection endpoints: `none`,
    /// `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    public let tokenEndpointAuthMethod: String
    /// The redirect URIs the authorization endpoint accepts (a loopback one on any port).
    public let redirectURIs: [String]
    /// The grant types the client may use: `authorization_code` (with `refresh_token`), `refresh_token`,
    /// `client_credentials`.
    public let grantTypes: [String]
    /// The response types: `code`, or none for a client without `authorization_code`.
    public let responseTypes: [String]
    /// `client_name`, as registered.
    public let clientName: String?
    /// `scope`, as registered (kept and echoed, not enforced).
    public let scope: String?
    /// The registered JWK Set (`jwks`), as JSON text; `nil` when the client registered none.
    public let jwks: String?
    /// The `kid`s of the keys in ``jwks``, sorted: the keys a `private_key_jwt` assertion may be signed with.
    public let keyIds: [String]
}
