public import Foundation

/// What a FHIR server says about its SMART authorization (SMART App Launch 2.2, section "Conformance"): from
/// `{fhirBase}/.well-known/smart-configuration`, or for older servers from the CapabilityStatement's `oauth-uris`
/// extension at `{fhirBase}/metadata`.
public struct SMARTConfiguration: Sendable, Equatable {
    /// Where the configuration was found.
    public enum Source: Sendable, Equatable {
        /// `{fhirBase}/.well-known/smart-configuration`.
        case wellKnown
        /// The CapabilityStatement at `{fhirBase}/metadata` (an older server): endpoints only, no capabilities.
        case capabilityStatement
    }

    /// The FHIR server the configuration belongs to, as the app configured it.
    public let fhirBase: URL
    /// Which document it came from.
    public let source: Source
    /// `issuer`: the OpenID Connect issuer of the server's id tokens, when it states one.
    public let issuer: String?
    /// `jwks_uri`: the keys the server's id tokens are signed with.
    public let jwksURI: URL?
    /// `authorization_endpoint`.
    public let authorizationEndpoint: URL
    /// `token_endpoint`.
    public let tokenEndpoint: URL
    /// `revocation_endpoint` (RFC 7009), when offered.
    public let revocationEndpoint: URL?
    /// `introspection_endpoint` (RFC 7662), when offered.
    public let introspectionEndpoint: URL?
    /// `registration_endpoint` (RFC 7591), when offered.
    public let registrationEndpoint: URL?
    /// `management_endpoint`, when offered.
    public let managementEndpoint: URL?
    /// `capabilities`, such as `launch-ehr`, `client-public`, `permission-v2`, `sso-openid-connect`.
    public let capabilities: [String]
    /// `code_challenge_methods_supported`; empty when the document does not say (a CapabilityStatement never does).
    public let codeChallengeMethods: [String]
    /// `token_endpoint_auth_methods_supported`, when listed.
    public let tokenEndpointAuthMethods: [String]?
    /// `token_endpoint_auth_signing_alg_values_supported`, when listed: the algorithms an asymmetric client's
    /// assertion may be signed with.
    public let tokenEndpointAuthSigningAlgorithms: [String]?
    /// `scopes_supported`, when listed.
    public let scopesSupported: [String]?
    /// `grant_types_supported`, when listed.
    public let grantTypesSupported: [String]?
    /// `dpop_signing_alg_values_supported` (RFC 9449), when `.well-known/smart-configuration` lists it: with ES256
    /// among them a login binds its tokens to a key, as ``VaultConfiguration/dpop`` says.
    public internal(set) var dpopSigningAlgorithms: [String]? = nil

    /// Whether the server says it takes PKCE with S256, which every SMART app must use.
    public var offersS256: Bool { codeChallengeMethods.contains("S256") }
}

extension SMARTConfiguration {
    /// The same configuration with `dpop_signing_alg_values_supported` as `algorithms`.
    func withDPoP(_ algorithms: [String]?) -> SMARTConfiguration {
        var copy = self
        copy.dpopSigningAlgorithms = algorithms
        return copy
    }
}
