/// `CREDENTIAL_VAULT_TIER` names no tier of ``Tier``.
public struct UnknownTier: Error, CustomStringConvertible {
    /// The variable's value.
    public let value: String

    /// The value, and the tiers it could have named.
    public var description: String {
        let tiers = Tier.allCases.map(\.rawValue).joined(separator: ", ")
        return "\(Tier.environmentVariable)=\(value) names no tier: use one of \(tiers), or leave it unset for fast"
    }
}
