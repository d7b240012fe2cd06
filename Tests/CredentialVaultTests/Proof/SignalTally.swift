/// What the signal harness counted; the suite's figure line and its verdict.
struct SignalTally {
    /// Signals sent, by name.
    var signals: [String: Int] = [:]
    /// Children that ended by the signal they were sent (after the envelope was on disk, when it came in the window).
    var endedBySignal = 0
    /// Children whose last line was `received N` (no `sealed N`): the signal struck during a refresh, after its
    /// request, and (held until the fsync, when the child holds them) ended it before the call returned.
    var inWindow = 0
    /// Stored logins the issuer refused afterwards. Goal 0.
    var lostLogins = 0
    /// Every miss, in words (never a secret).
    var misses: [String] = []

    var total: Int { signals.values.reduce(0, +) }

    /// `PROOF signals: ...`, the line a CI log reader greps.
    var figureLine: String {
        let counts = signals.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return "PROOF signals: \(total) signals (\(counts)), "
            + "\(inWindow) during a refresh (after its request, before its sealed line), \(lostLogins) lost logins, "
            + "\(endedBySignal) ended by their signal; \(misses.count) misses"
    }
}
