/// When a login binds its tokens to a key (DPoP, RFC 9449): ``VaultConfiguration/dpop``.
public enum DPoPSetting: String, Sendable, CaseIterable {
    /// When the issuer's discovery lists ES256 in `dpop_signing_alg_values_supported` (the default).
    case whenOffered = "auto"
    /// Always: every token request carries a proof, whatever discovery says.
    case always
    /// Never: bearer tokens only.
    case never
}
