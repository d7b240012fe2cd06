/// Where every endpoint lives: the TIM KeyService v1 and Keycloak path layout, defined once.
///
/// The key service and OpenID Connect are below the issuer, `/auth/realms/{realm}`; their static members are
/// paths relative to it, which ``path(_:)`` turns into the absolute path the router matches. The SMART mode's
/// FHIR base and launch endpoints are absolute paths below the base URL.
struct Layout: Sendable {
    /// `/auth/realms/{realm}`: the issuer's path below the server's base URL, without a trailing slash.
    let issuerPath: String

    /// The layout for `realm`, which must be unreserved characters only (no percent-encoding needed).
    init(realm: String) {
        issuerPath = "/auth/realms/\(realm)"
    }

    /// The absolute path of `relative`, a path below the issuer.
    func path(_ relative: String) -> String {
        issuerPath + "/" + relative
    }

    // MARK: Key service

    /// The key service's base: `createkey` and `key` are below it (``KeyServiceRoutes``, in KeyServiceCore).
    static let keyService = "keyservice/v1"
    /// Protocol 2's base beside it (issue 27): `createkey`, `enroll`, `evaluate`, `confirm` and `key`.
    static let keyServiceV2 = "keyservice/v2"

    // MARK: OpenID Connect, at Keycloak's paths

    /// The discovery document (OpenID Connect Discovery 1.0 section 4).
    static let discovery = ".well-known/openid-configuration"
    private static let openIDConnect = "protocol/openid-connect"
    /// The authorization endpoint.
    static let authorization = openIDConnect + "/auth"
    /// The token endpoint.
    static let token = openIDConnect + "/token"
    /// The JSON Web Key Set.
    static let certs = openIDConnect + "/certs"
    /// The revocation endpoint (RFC 7009).
    static let revocation = openIDConnect + "/revoke"
    /// The end-session endpoint.
    static let endSession = openIDConnect + "/logout"
    /// The userinfo endpoint.
    static let userinfo = openIDConnect + "/userinfo"

    /// The device authorization endpoint (RFC 8628), at Keycloak's path.
    static let deviceAuthorization = authorization + "/device"
    /// The device grant's verification page (`verification_uri`), at Keycloak's path.
    static let deviceVerification = "device"

    /// The token introspection endpoint (RFC 7662), at Keycloak's path.
    static let introspection = token + "/introspect"

    /// The dynamic client registration endpoint (RFC 7591), at Keycloak's path; a client's configuration endpoint
    /// (RFC 7592, its `registration_client_uri`) is `{registration}/{client_id}`.
    static let registration = "clients-registrations/openid-connect"

    // MARK: SMART on FHIR, below the server's base URL rather than the issuer

    /// The FHIR base below the base URL, without a trailing slash.
    static let fhirBase = "/fhir/r4"
    /// Creates an EHR launch id (POST, JSON).
    static let ehrLaunch = "/smart/ehr-launch"
    /// The style sheet a token response's `smart_style_url` names.
    static let smartStyle = "/smart/style.json"
}
