/// How a registered client authenticates at the token, revocation and introspection endpoints (RFC 7591 section
/// 2, `token_endpoint_auth_method`).
enum TokenEndpointAuthMethod: String, Sendable, CaseIterable {
    /// A public client: `client_id` only.
    case none
    /// The secret in HTTP Basic, its parts form-urlencoded first (RFC 6749 section 2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// The secret as the form field `client_secret`.
    case clientSecretPost = "client_secret_post"
    /// A JWT assertion signed by a key of the registered JWK Set (RFC 7523 section 2.2).
    case privateKeyJWT = "private_key_jwt"

    /// Whether the server issues a `client_secret` for this method.
    var hasSecret: Bool { self == .clientSecretBasic || self == .clientSecretPost }
}
