import Foundation

/// What a configuration without a client id registers at the issuer (RFC 7591), at the first OpenID Connect login.
///
/// The registration asks for the authorization code and refresh token grants, the login's redirect URI and the
/// configured scopes, and for the first of ``methods`` the issuer's `token_endpoint_auth_methods_supported` lists
/// (by default `private_key_jwt` with a new P-384 key, ES384, then `client_secret_basic`, `client_secret_post`, and a
/// public client last). When the issuer lists no methods, the default asks for none and takes what the issuer
/// registers (RFC 7591's default is `client_secret_basic`); methods of the app's own choice ask for the first. The
/// registration and its secrets are sealed with the refresh token (``ClientRegistration``).
public struct DynamicRegistration: Sendable, CustomStringConvertible {
    /// `client_name`, shown to the user by the issuer's consent page.
    public var clientName: String
    /// The authentication methods the client may register with, the preferred first.
    public var methods: [ClientAuthentication.Method]
    /// An initial access token (RFC 7591 section 3), for an issuer that registers only clients that bring one. A
    /// secret.
    public var initialAccessToken: String?

    /// The registration's settings; by default the client is named `credential-vault` and the strongest method the
    /// issuer lists is asked for.
    public init(
        clientName: String = "credential-vault",
        methods: [ClientAuthentication.Method] = DynamicRegistration.preference,
        initialAccessToken: String? = nil
    ) {
        self.clientName = clientName
        self.methods = methods
        self.initialAccessToken = initialAccessToken
    }

    /// The methods in the order they are preferred by default, strongest first.
    public static let preference: [ClientAuthentication.Method] = [
        .privateKeyJWT, .clientSecretBasic, .clientSecretPost, .none,
    ]

    /// The method to ask for at an issuer that lists `supported` (nil: ask for none and take the issuer's).
    func method(supported: [String]?) -> ClientAuthentication.Method? {
        guard let supported else { return methods == Self.preference ? nil : methods.first }
        return methods.first { supported.contains($0.name) } ?? methods.first
    }

    /// The name and method, never the initial access token.
    public var description: String {
        "DynamicRegistration(clientName: \(clientName), methods: \(methods.map(\.name)))"
    }
}
