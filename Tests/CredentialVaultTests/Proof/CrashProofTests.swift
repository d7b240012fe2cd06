import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Issue 15's crash proof: SIGKILL at random moments of logins, refreshes, password changes and device unlock
/// changes never leaves an envelope that does not open, and loses a login only in the window between the issuer's
/// rotation and the fsync (``CrashHarness`` defines both). 300 kills by default; `CREDENTIAL_VAULT_PROOF_KILLS`
/// sets another number (`make proof-crash-long`).
@Suite("crash proof: SIGKILL at random moments", .tags(.proof), .enabled(inTier: .proof))
struct CrashProofTests {
    static var kills: Int {
        ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_PROOF_KILLS"].flatMap { Int($0) } ?? 300
    }

    @Test("after every kill the envelope opens with the right password and no login is lost outside the window")
    func randomKills() async throws {
        try await AuthFixture.with { fixture in
            var harness = try await CrashHarness(fixture)
            for _ in 0..<Self.kills { try await harness.killAtRandom() }
            let tally = harness.tally
            print(tally.figureLine)
            #expect(tally.kills == Self.kills)
            #expect(tally.unreadableEnvelopes == 0)
            #expect(tally.lostLoginsOutsideWindow == 0)
            #expect(tally.misses.isEmpty, "\(tally.misses)")
        }
    }

    @Test("the harness catches a planted writer that rewrites the envelope in place, killed mid-write")
    func plantedInPlaceWriter() async throws {
        try await AuthFixture.with { fixture in
            var harness = try await CrashHarness(fixture)
            try await harness.killInPlaceWriterMidWrite()
            #expect(harness.tally.kills == 1)
            #expect(harness.tally.unreadableEnvelopes == 1, "\(harness.tally.misses)")
            #expect(harness.tally.lostLoginsOutsideWindow == 0)
        }
    }

    @Test(
        "the harness catches a planted login that keeps the rotated token in memory only: a lost login outside the window"
    )
    func plantedMemoryOnlyLogin() async throws {
        try await AuthFixture.with { fixture in
            var harness = try await CrashHarness(fixture)
            try await harness.killMemoryOnlyLoginAfterItsAnswer()
            #expect(harness.tally.kills == 1)
            #expect(harness.tally.lostLoginsOutsideWindow == 1, "\(harness.tally.misses)")
            #expect(harness.tally.unreadableEnvelopes == 0)
        }
    }
}
