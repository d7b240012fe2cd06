/// A public OAuth client (no secret), identified by `clientId`.
///
/// A loopback redirect URI (`http://127.0.0.1/...`, `http://[::1]/...`, `http://localhost/...`)
/// matches on any port, as RFC 8252 section 7.3 asks; every other URI must match exactly.
public struct MockClient: Sendable {
    /// The `client_id` the client sends; also the `aud` of its tokens.
    public var clientId: String
    /// The redirect URIs the authorization and logout endpoints accept for this client.
    public var redirectURIs: [String]

    /// A public client with its registered redirect URIs.
    public init(clientId: String, redirectURIs: [String]) {
        self.clientId = clientId
        self.redirectURIs = redirectURIs
    }
}
