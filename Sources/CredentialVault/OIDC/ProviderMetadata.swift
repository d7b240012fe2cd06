public import Foundation

/// What the client needs from an issuer's discovery documents.
public struct ProviderMetadata: Sendable, Equatable {
    /// The issuer, exactly as configured.
    public let issuer: URL
    /// The issuer identifier exactly as the discovery document states it: an id_token's `iss` and a redirect's `iss`
    /// (RFC 9207) must equal it. Nil when the server states none (a SMART CapabilityStatement): no id token can then
    /// be checked, and a redirect's `iss` cannot be.
    public let issuerIdentifier: String?
    /// Where the user logs in (authorization code flow).
    public let authorizationEndpoint: URL
    /// Where codes and refresh tokens become tokens.
    public let tokenEndpoint: URL
    /// RFC 7009 revocation, from OIDC discovery or, where that omits it, the RFC 8414 document.
    public let revocationEndpoint: URL?
    /// RFC 7662 introspection, when offered.
    public let introspectionEndpoint: URL?
    /// RP-initiated logout, when offered.
    public let endSessionEndpoint: URL?
    /// RFC 7591 dynamic client registration, when offered: a configuration without a client id registers there.
    public let registrationEndpoint: URL?
    /// RFC 8628 device authorization, when offered: ``Auth/performDeviceAuthorizationFlow(userId:scopes:maximumPolls:presentUserCode:)``
    /// logs in there.
    public let deviceAuthorizationEndpoint: URL?
    /// The issuer's JWK Set, which id_token signatures are checked against.
    public let jwksURI: URL?
    /// `token_endpoint_auth_methods_supported`, when the document lists it.
    public let tokenEndpointAuthMethods: [String]?
    /// `revocation_endpoint_auth_methods_supported`, when a document lists it.
    public let revocationEndpointAuthMethods: [String]?
    /// `token_endpoint_auth_signing_alg_values_supported`, when the document lists it: the algorithms a
    /// `private_key_jwt` assertion may be signed with (one is chosen from the client's key, RS384 and ES384 first).
    public let tokenEndpointAuthSigningAlgorithms: [String]?
    /// `authorization_response_iss_parameter_supported` (RFC 9207): the issuer puts `iss` in every authorization
    /// response, so one without it is refused.
    public let authorizationResponseIssuer: Bool
    /// `grant_types_supported`, when the document lists it (token exchange, RFC 8693, is used where it is listed).
    public let grantTypesSupported: [String]?
    /// `dpop_signing_alg_values_supported` (RFC 9449 section 5.1), when the document lists it: with ES256 among
    /// them a login binds its tokens to a key (``VaultConfiguration/dpop``).
    public var dpopSigningAlgorithms: [String]? = nil

    /// Metadata discovered elsewhere (SMART on FHIR's `.well-known/smart-configuration` or CapabilityStatement),
    /// for ``VaultConfiguration/providerMetadata``.
    /// - Throws: ``VaultError`` `.insecureURL` when an endpoint is neither https nor a loopback address: no secret is
    ///   ever sent to one.
    public init(
        issuer: URL,
        issuerIdentifier: String?,
        authorizationEndpoint: URL,
        tokenEndpoint: URL,
        revocationEndpoint: URL? = nil,
        introspectionEndpoint: URL? = nil,
        endSessionEndpoint: URL? = nil,
        registrationEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil,
        jwksURI: URL? = nil,
        tokenEndpointAuthMethods: [String]? = nil,
        revocationEndpointAuthMethods: [String]? = nil,
        tokenEndpointAuthSigningAlgorithms: [String]? = nil,
        authorizationResponseIssuer: Bool = false,
        grantTypesSupported: [String]? = nil
    ) throws(VaultError) {
        let endpoints: [(URL?, String)] = [
            (authorizationEndpoint, "authorization_endpoint"), (tokenEndpoint, "token_endpoint"),
            (revocationEndpoint, "revocation_endpoint"), (introspectionEndpoint, "introspection_endpoint"),
            (endSessionEndpoint, "end_session_endpoint"), (registrationEndpoint, "registration_endpoint"),
            (deviceAuthorizationEndpoint, "device_authorization_endpoint"), (jwksURI, "jwks_uri"),
        ]
        for case (let url?, let name) in endpoints { try Discovery.requireSecure(url, name) }
        self.issuer = issuer
        self.issuerIdentifier = issuerIdentifier
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.registrationEndpoint = registrationEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.jwksURI = jwksURI
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
        self.revocationEndpointAuthMethods = revocationEndpointAuthMethods
        self.tokenEndpointAuthSigningAlgorithms = tokenEndpointAuthSigningAlgorithms
        self.authorizationResponseIssuer = authorizationResponseIssuer
        self.grantTypesSupported = grantTypesSupported
    }
}
