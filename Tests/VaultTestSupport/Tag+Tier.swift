public import Testing

/// The tags that put a suite in a tier of ``Tier`` (a suite without one is in the fast tier), and the tag of the
/// concurrency suites `make proof-races` runs again under ThreadSanitizer.
///
/// `make test` selects each phase's suites by these tags (`Tests/tiers.py`); the heavy tiers also need
/// `.enabled(inTier:)`, so that a bare `swift test` skips them.
extension Tag {
    /// ``Tier/cli``: the suites that run the built `credential-vault`.
    @Tag public static var cli: Self
    /// ``Tier/alone``: the suites that flood one process on purpose, one test at a time.
    @Tag public static var alone: Self
    /// ``Tier/proof``: the crash, disk-fault, signal and full-store proofs.
    @Tag public static var proof: Self
    /// ``Tier/fuzz``: the hostile-input suite.
    @Tag public static var fuzz: Self
    /// Not a tier: the concurrency suites `make proof-races` runs again, each in its own tier, under
    /// ThreadSanitizer.
    @Tag public static var races: Self
}
