public import Testing

extension Trait where Self == ConditionTrait {
    /// Runs the suite or test only in the given tier: for a heavy tier, only when `CREDENTIAL_VAULT_TIER` names it,
    /// so that a bare `swift test` skips it. Goes with the tier's tag (`.tags(.alone), .enabled(inTier: .alone)`):
    /// the tag is what `make test` selects the phase by.
    ///
    /// A `CREDENTIAL_VAULT_TIER` that names no tier fails the test with ``UnknownTier``.
    public static func enabled(inTier tier: Tier) -> Self {
        .enabled(
            if: try tier.isSelected,
            "runs in the \(tier.rawValue) tier: \(Tier.environmentVariable)=\(tier.rawValue)"
        )
    }
}
