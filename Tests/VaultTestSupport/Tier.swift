import Foundation

/// The tier of `make test` a suite runs in, chosen by the suite itself (`.tags(.alone), .enabled(inTier: .alone)`)
/// and selected for a run by one environment variable, `CREDENTIAL_VAULT_TIER`.
///
/// A suite that names no tier is in the fast tier. The heavy tiers (``alone``, ``proof``, ``fuzz``) run only when
/// `CREDENTIAL_VAULT_TIER` names them, so a bare `swift test` runs the fast and the CLI suites and skips the
/// floods, the proofs and the hostile-input suite. `make test` runs each tier as a phase of its own with
/// `Tests/tiers.py run TIER`, which selects the suites by their tag; `make test-tiers-check` fails when a test is
/// in two tiers or when a heavy tier's tag comes without its condition.
public enum Tier: String, CaseIterable, Sendable {
    /// Every suite that names no tier: a bare `swift test`, and `make test`'s first phase, in parallel.
    case fast
    /// The suites that run the built `credential-vault` against a server in the test process, which waits 15 s for
    /// an answer: they run in a bare `swift test`, and in a phase of their own in `make test`, so the CPU-heavy
    /// suites cannot hold that server back past the timeout on a busy two-core machine.
    case cli
    /// The suites that flood one process on purpose (a thousand concurrent callers or requests, every Argon2id place
    /// held, a PostgreSQL hammer): one test at a time, after the others.
    case alone
    /// The proof suites of issues 15 and 21 (300 kills, disk faults, signals, a full store): after the alone tier,
    /// so the kills land on children that are not starved by the CPU-heavy suites.
    case proof
    /// The hostile-input suite (100,000 inputs per parser): both cores busy for its whole run.
    case fuzz

    /// The environment variable that selects the tier of a run: unset or empty is ``fast``.
    public static let environmentVariable = "CREDENTIAL_VAULT_TIER"

    /// The tier `CREDENTIAL_VAULT_TIER` names.
    /// - Throws: ``UnknownTier`` when it names none, so that a misspelt tier fails instead of running nothing.
    public static func selected() throws(UnknownTier) -> Tier {
        let value = ProcessInfo.processInfo.environment[environmentVariable] ?? ""
        if value.isEmpty { return .fast }
        guard let tier = Tier(rawValue: value) else { throw UnknownTier(value: value) }
        return tier
    }

    /// Whether a suite of this tier runs in this process: the fast and CLI tiers always (`make test` keeps them
    /// apart by their tags), a heavy tier only when `CREDENTIAL_VAULT_TIER` names it.
    /// - Throws: ``UnknownTier`` when `CREDENTIAL_VAULT_TIER` names no tier.
    public var isSelected: Bool {
        get throws(UnknownTier) {
            switch self {
            case .fast, .cli: true
            case .alone, .proof, .fuzz: try Tier.selected() == self
            }
        }
    }
}
