/// A SMART Backend Services client as the mock's authorization server registers it: a confidential client that
/// authenticates with a `private_key_jwt` assertion signed by one of the keys of its JWK Set, and asks for
/// `system/` scopes with a `client_credentials` grant. (The client side of the same grant is CredentialVaultSMART's
/// `SMARTBackendClient`.)
///
/// Configure it in ``SMARTMode/backendClients``; the `keyservice-mock` executable takes
/// `--smart-backend-client ID=JWKS_FILE`.
public struct RegisteredBackendClient: Sendable {
    /// The client id: the assertion's `iss` and `sub`.
    public var clientId: String
    /// The client's public keys, as a JWK Set in JSON text (`{"keys":[...]}`).
    ///
    /// Every key needs a `kid` (the assertion's header names the key it was signed with) and must be an
    /// RSA key of at least 2048 bits or an EC key on P-256 or P-384, without private parts. A key's
    /// optional `alg` pins the one algorithm it verifies. ``KeyServiceMockServer/start(_:)`` refuses a
    /// set that does not hold to this.
    public var jwks: String
    /// When set, the `scope` every token of this client grants, whatever was asked; `nil` grants the
    /// `system/` scopes asked for.
    public var grantedScope: String?

    /// A backend client with its JWK Set (JSON text) and, optionally, the scope it is always granted.
    public init(clientId: String, jwks: String, grantedScope: String? = nil) {
        self.clientId = clientId
        self.jwks = jwks
        self.grantedScope = grantedScope
    }
}
