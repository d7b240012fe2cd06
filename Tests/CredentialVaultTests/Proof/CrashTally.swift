/// What the crash harness counted over its kills; the suite's figure line and its verdict.
struct CrashTally {
    /// Children killed with SIGKILL while they worked.
    var kills = 0
    /// Envelopes that did not open afterwards with the right password (the old or the new one when the kill cut a
    /// password change): damaged, unopenable, or opened only by the password the child had not set. Goal 0.
    var unreadableEnvelopes = 0
    /// Lost logins (see ``CrashHarness``) whose kill landed outside both windows, or whose envelope held an older
    /// token than the one before the issuer's newest. Goal 0.
    var lostLoginsOutsideWindow = 0
    /// Kills after `received N` and before `sealed N`: the window between the rotated token's arrival and the fsync.
    var killsInWindow = 0
    /// Lost logins among those: the envelope held the token before the newest.
    var lostLoginsInWindow = 0
    /// Kills after `requesting N` and before `received N`: the issuer may have rotated while the answer was in
    /// flight.
    var killsInFlight = 0
    /// Lost logins among those.
    var lostLoginsInFlight = 0
    /// Kills between `changing` and `changed`.
    var killsInPasswordChange = 0
    /// Of those, envelopes that opened with the new password.
    var changesThatLanded = 0
    /// Device-unlock checks after a kill that found it on: it opened the same token, or was refused with
    /// `isDeviceUnlockFailed` (its secret belonged to a write the kill cut short).
    var deviceUnlockOpened = 0
    var deviceUnlockRefused = 0
    /// Every miss, in words (never a secret), for the test's report.
    var misses: [String] = []

    /// `PROOF crash: ...`, the line a CI log reader greps.
    var figureLine: String {
        "PROOF crash: \(kills) kills, \(unreadableEnvelopes) unreadable envelopes, "
            + "\(lostLoginsOutsideWindow) lost logins outside the receive-to-fsync window; "
            + "in that window \(killsInWindow) kills, \(lostLoginsInWindow) lost logins; "
            + "answer in flight \(killsInFlight) kills, \(lostLoginsInFlight) lost logins; "
            + "\(killsInPasswordChange) kills mid password change (\(changesThatLanded) landed); "
            + "device unlock after a kill: \(deviceUnlockOpened) opened, \(deviceUnlockRefused) refused cleanly; "
            + "\(misses.count) misses"
    }
}
