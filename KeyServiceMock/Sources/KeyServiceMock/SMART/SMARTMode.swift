/// The SMART on FHIR mode: a FHIR base at `{baseURL}/fhir/r4`, SMART discovery, launch context in token
/// responses, opaque access tokens and a small Patient endpoint.
///
/// Set ``KeyServiceMockConfiguration/smart`` to turn it on; `nil` (the default) leaves the server as it is.
public struct SMARTMode: Sendable {
    /// Whether `.well-known/smart-configuration` answers, or only the CapabilityStatement; `.wellKnown` by default.
    public var discovery: SMARTDiscoveryStyle = .wellKnown
    /// Whether the server offers PKCE S256 (and then requires it); `true` by default.
    ///
    /// When `false`, discovery lists `code_challenge_methods_supported: ["plain"]`, and the authorization
    /// endpoint takes a `plain` challenge or none at all: a legacy server a client must be wary of.
    public var offersS256: Bool = true
    /// Whether a `refresh_token` grant's answer repeats the launch context; `false` by default.
    ///
    /// The specification lets a server leave `patient`, `encounter`, `fhirContext`, `need_patient_banner`,
    /// `smart_style_url`, `intent` and `tenant` out of a refresh, so by default they are left out (`scope`
    /// is always there): a client must keep the context of the first answer.
    public var refreshIncludesContext: Bool = false
    /// How many patients the FHIR endpoint serves: `Patient/p1` to `Patient/p{patientCount}`; 12 by default.
    public var patientCount: Int = 12
    /// The patient a standalone launch asking for `launch/patient` gets; `p1` by default.
    public var defaultPatient: String = "p1"
    /// The encounter a standalone launch asking for `launch/encounter` gets; `e1` by default.
    public var defaultEncounter: String = "e1"
    /// When set, the `scope` every token response grants, whatever was asked; `nil` grants the scopes asked for.
    ///
    /// The FHIR endpoint checks access against this granted scope, so a client can be tested for keeping
    /// (and acting on) what was granted rather than what it asked for.
    public var grantedScope: String? = nil
    /// The SMART Backend Services clients the token endpoint knows; none by default.
    ///
    /// Each may get an access token with a `client_credentials` grant, authenticated by a `private_key_jwt`
    /// assertion its JWK Set verifies, for `system/` scopes. With at least one, discovery lists
    /// `client_credentials`, `private_key_jwt` and the capability `client-confidential-asymmetric`; with none,
    /// the grant is unsupported and discovery does not mention it. ``grantedScope`` does not apply to them:
    /// ``RegisteredBackendClient/grantedScope`` does.
    public var backendClients: [RegisteredBackendClient] = []
    /// How strictly `private_key_jwt` assertions (of backend and registered clients) are checked: by default four
    /// algorithms, and the endpoint called taken as `aud` besides the token endpoint; ``ClientAssertionRules/smart``
    /// is SMART's text to the letter (RS384 or ES384, `aud` the token endpoint everywhere). A `kid` is always
    /// required.
    public var clientAssertions: ClientAssertionRules = ClientAssertionRules()

    /// The defaults: well-known discovery, S256 offered, refreshes without context, 12 patients,
    /// `p1` and `e1` for standalone launches, the requested scopes granted, no backend clients.
    public init() {}
}
