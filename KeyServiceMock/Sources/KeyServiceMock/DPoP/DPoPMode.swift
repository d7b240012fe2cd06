/// The identity provider's DPoP (RFC 9449), for ``KeyServiceMockConfiguration/dpop``: discovery lists
/// `dpop_signing_alg_values_supported` (ES256), every proof is checked by the RFC, and tokens asked for with a proof
/// are bound to its key.
public struct DPoPMode: Sendable {
    /// Whether every proof must carry the server's nonce: a proof without it (or with an old one) is refused with
    /// `use_dpop_nonce` and a `DPoP-Nonce` header (RFC 9449 sections 8 and 9).
    public var requiresNonce: Bool
    /// Whether a token request without a proof is refused (`invalid_dpop_proof`); off, it gets bearer tokens.
    public var requiresProof: Bool

    /// DPoP with or without nonces; token requests without a proof get bearer tokens unless `requiresProof`.
    public init(requiresNonce: Bool = false, requiresProof: Bool = false) {
        self.requiresNonce = requiresNonce
        self.requiresProof = requiresProof
    }
}
