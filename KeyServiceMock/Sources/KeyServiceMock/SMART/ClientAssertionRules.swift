/// How strictly the token, introspection and revocation endpoints check a `private_key_jwt` client assertion
/// (RFC 7523 section 3) beyond what they always check (a `kid` naming a key of the client's JWK Set, the signature,
/// `iss` = `sub`, `exp` at most five minutes ahead, a fresh `jti`).
///
/// The default takes RS384, ES384, RS256 and ES256, and at introspection and revocation an `aud` of either the token
/// endpoint or the endpoint called. ``smart`` is a server as SMART App Launch 2.2's asymmetric client
/// authentication describes it: RS384 and ES384 only, and `aud` the token endpoint ("the token URL") at every
/// endpoint, as Authlib's SMART servers check.
public struct ClientAssertionRules: Sendable, Equatable {
    /// The algorithms an assertion may be signed with, in the order discovery lists them as
    /// `token_endpoint_auth_signing_alg_values_supported`: RS384, ES384, RS256 and ES256 by default. Only these four
    /// are ever taken; an algorithm outside them listed here is ignored.
    public var algorithms: [String] = BackendServices.algorithms
    /// Whether an assertion's `aud` must be the token endpoint at the introspection and revocation endpoints too;
    /// `false` by default (the endpoint called is taken there as well).
    public var audienceIsTokenEndpointOnly: Bool = false

    /// The default rules: four algorithms, the endpoint called taken as `aud` besides the token endpoint.
    public init() {}

    /// The rules with `algorithms` and `audienceIsTokenEndpointOnly`.
    public init(algorithms: [String], audienceIsTokenEndpointOnly: Bool) {
        self.algorithms = algorithms
        self.audienceIsTokenEndpointOnly = audienceIsTokenEndpointOnly
    }

    /// SMART's asymmetric client authentication to the letter: RS384 and ES384 only, `aud` the token endpoint only.
    public static let smart = ClientAssertionRules(algorithms: ["RS384", "ES384"], audienceIsTokenEndpointOnly: true)

    /// The algorithms taken: ``algorithms`` that are among the four the server can verify.
    var accepted: [String] { algorithms.filter(BackendServices.algorithms.contains) }
}
