import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Issue 21's signal proof: SIGINT, SIGTERM and SIGHUP at random moments of a refresh loop, many of them between the
/// rotated token's arrival and its fsync, never lose a login (``SignalHarness``). 150 signals by default;
/// `CREDENTIAL_VAULT_PROOF_SIGNALS` sets another number.
@Suite(
    "signal proof: SIGINT, SIGTERM and SIGHUP never lose a login",
    .tags(.proof),
    .enabled(inTier: .proof),
    .serialized
)
struct SignalProofTests {
    static var count: Int {
        ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_PROOF_SIGNALS"].flatMap { Int($0) } ?? 150
    }

    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    @Test("after every SIGINT, SIGTERM or SIGHUP the stored login still works, and the process ended by its signal")
    func randomSignals() async throws {
        try await AuthFixture.with { fixture in
            var harness = try await SignalHarness(fixture)
            for round in 0..<Self.count {
                try await harness.interrupt(with: Self.signals[round % 3], inWindow: round % 2 == 0)
            }
            let tally = harness.tally
            print(tally.figureLine)
            #expect(tally.total == Self.count)
            #expect(tally.lostLogins == 0)
            #expect(tally.endedBySignal == Self.count)
            #expect(tally.misses.isEmpty, "\(tally.misses)")
        }
    }

    @Test("the harness catches a refresh loop that does not hold the signals: a signal in the window loses the login")
    func plantedUnguardedLoop() async throws {
        try await AuthFixture.with { fixture in
            var harness = try await SignalHarness(fixture, guarded: false)
            for round in 0..<12 { try await harness.interrupt(with: Self.signals[round % 3], inWindow: true) }
            print("signal proof, planted defect (no TerminationSignals): \(harness.tally.figureLine)")
            #expect(harness.tally.lostLogins > 0)
        }
    }
}
