/// The discovery document (OpenID Connect Discovery 1.0 section 3).
struct DiscoveryDocument: Encodable {
    let issuer: String
    let authorizationEndpoint: String
    let tokenEndpoint: String
    let jwksURI: String
    let userinfoEndpoint: String
    /// Absent when the configuration offers no revocation (``KeyServiceMockConfiguration/offersRevocation``).
    let revocationEndpoint: String?
    let endSessionEndpoint: String
    let responseTypesSupported: [String]
    let responseModesSupported: [String]
    var grantTypesSupported: [String]
    let subjectTypesSupported: [String]
    let idTokenSigningAlgValuesSupported: [String]
    let codeChallengeMethodsSupported: [String]
    let tokenEndpointAuthMethodsSupported: [String]
    /// Listed with dynamic registration only: the algorithms a `private_key_jwt` assertion may use.
    let tokenEndpointAuthSigningAlgValuesSupported: [String]?
    let revocationEndpointAuthMethodsSupported: [String]?
    /// The RFC 7591 registration endpoint, with dynamic registration only.
    let registrationEndpoint: String?
    let scopesSupported: [String]
    let claimsSupported: [String]
    let authorizationResponseIssParameterSupported: Bool
    /// With DPoP on only (RFC 9449 section 5.1).
    var dpopSigningAlgValuesSupported: [String]? = nil
    /// With the device grant on only (RFC 8628 section 4).
    var deviceAuthorizationEndpoint: String? = nil

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case registrationEndpoint = "registration_endpoint"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
    }
}
