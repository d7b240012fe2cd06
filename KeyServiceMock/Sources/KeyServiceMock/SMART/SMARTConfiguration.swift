/// The SMART configuration document at `{fhirBase}/.well-known/smart-configuration` (SMART App Launch 2.2,
/// "conformance").
struct SMARTConfiguration: Encodable {
    let issuer: String
    let jwksURI: String
    let authorizationEndpoint: String
    let tokenEndpoint: String
    let revocationEndpoint: String
    let introspectionEndpoint: String
    /// The RFC 7591 registration endpoint, with dynamic registration only.
    let registrationEndpoint: String?
    let tokenEndpointAuthMethodsSupported: [String]
    /// Listed only with backend clients: the algorithms their `private_key_jwt` assertions may use.
    let tokenEndpointAuthSigningAlgValuesSupported: [String]?
    let scopesSupported: [String]
    let responseTypesSupported: [String]
    let grantTypesSupported: [String]
    let capabilities: [String]
    let codeChallengeMethodsSupported: [String]

    /// What this server can do, and names in `capabilities`.
    static let supportedCapabilities = [
        "launch-ehr", "launch-standalone", "client-public", "context-ehr-patient", "context-ehr-encounter",
        "context-standalone-patient", "context-standalone-encounter", "permission-offline", "permission-v1",
        "permission-v2", "permission-patient", "permission-user", "sso-openid-connect",
    ]

    /// What the SMART mode `mode` can do: ``supportedCapabilities``; with dynamic registration
    /// `client-confidential-symmetric` and `client-confidential-asymmetric` (a client registers with a secret or
    /// keys), and with backend clients `client-confidential-asymmetric` (SMART Backend Services), which a server
    /// without either could not honour.
    static func capabilities(of mode: SMARTMode, dynamicRegistration: Bool) -> [String] {
        if dynamicRegistration {
            return supportedCapabilities + ["client-confidential-symmetric", "client-confidential-asymmetric"]
        }
        return mode.backendClients.isEmpty
            ? supportedCapabilities : supportedCapabilities + ["client-confidential-asymmetric"]
    }

    /// The scopes `scopes_supported` lists: launch, identity and refresh scopes, and examples of resource scopes
    /// (any v1 or v2 resource scope is taken).
    static let supportedScopes = [
        "openid", "fhirUser", "launch", "launch/patient", "launch/encounter", "offline_access", "online_access",
        "patient/*.rs", "user/*.rs", "patient/*.cruds", "user/*.cruds", "patient/*.read", "user/*.read",
    ]

    /// The `system/` scope examples listed besides ``supportedScopes`` when there are backend clients.
    static let systemScopes = ["system/*.rs", "system/*.read"]

    enum CodingKeys: String, CodingKey {
        case issuer, capabilities
        case jwksURI = "jwks_uri"
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case registrationEndpoint = "registration_endpoint"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case scopesSupported = "scopes_supported"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
    }
}
