import CredentialVault
import Foundation
import KeyServiceMock

/// Interrupts `vault-proof-child refresh-loop` (forced refreshes, each rotating the refresh token) with SIGINT,
/// SIGTERM or SIGHUP at a random moment, then checks with the library, as a restarted app would, that the login still
/// works: a password login redeems the stored refresh token, and the issuer (which rotates on every redemption and
/// revokes the family when an older token comes back) takes it. A refused token is a **lost login**; only SIGKILL may
/// lose one, so the goal is 0.
///
/// Half of the signals are sent just after a `received N` line, when the rotated token has arrived and is not yet
/// on disk (the window the library holds the signals in); the others after a random line and pause.
struct SignalHarness {
    let fixture: AuthFixture
    private let fingerprint = TokenFingerprint()
    private let userId: String
    private let password = "signal proof password"
    /// Whether the child installs ``TerminationSignals`` (false: the defect the planted test must catch).
    private let guarded: Bool
    private(set) var tally = SignalTally()

    /// A harness over `fixture`, with a user signed in and a password set.
    init(_ fixture: AuthFixture, guarded: Bool = true) async throws {
        self.fixture = fixture
        self.guarded = guarded
        userId = try await fixture.register(password: password)
    }

    /// Sends `number` to a new child at a random moment (in the receive-to-fsync window when `inWindow`), then
    /// checks the login.
    mutating func interrupt(with number: Int32, inWindow: Bool) async throws {
        let store = fixture.root.appending(path: "store").path
        let child = try ProofChildProcess(
            [
                "refresh-loop", fixture.server.issuer.absoluteString, fixture.server.keyServiceURL.absoluteString,
                store, userId,
            ] + (guarded ? [] : ["--no-signal-guard"]),
            input: [password, fingerprint.keyLine],
            caFile: fixture.caFile
        )
        let result: (lines: [String], killed: Bool)
        if inWindow {
            // A rotation after the first few: the loop is warm, the answer arrives, the signal follows at once.
            let round = Int.random(in: 2...4)
            result = try await child.signal(
                number,
                when: { $0.contains { $0.hasPrefix("received \(round) ") } },
                delay: .microseconds(Int.random(in: 0...300))
            )
        } else {
            let count = Int.random(in: 1...12)
            result = try await child.signal(
                number,
                when: { $0.count >= count },
                delay: .microseconds(Int.random(in: 0...20_000))
            )
        }
        tally.signals[Self.name(number), default: 0] += 1
        if result.killed {
            tally.endedBySignal += 1
        } else {
            let errors = try await child.standardError()
            tally.misses.append("\(Self.name(number)): the child did not end by it (\(child.termination)): \(errors)")
        }
        if case .afterArrival = CrashHarness.Window(result.lines) { tally.inWindow += 1 }
        do throws(VaultError) {
            _ = try await fixture.vault.auth.loginWithPassword(userId: userId, password: password)
        } catch {
            if error.isLoginExpired {
                tally.lostLogins += 1
                tally.misses.append("\(Self.name(number)): a lost login (last line \(result.lines.last ?? "none"))")
            } else {
                tally.misses.append("\(Self.name(number)): the login after the signal failed: \(error)")
            }
            try await fixture.vault.userStorage.clear(userId: userId)
            _ = try await fixture.register(password: password)
        }
    }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}
