import CredentialVault
import Foundation
import KeyServiceMock

/// Kills `vault-proof-child crash-loop` (login with rotation, refreshes, device unlock on and off, a password
/// change) with SIGKILL at a random moment, then checks what a restarted app would find, with the library itself.
///
/// After every kill:
/// - The envelope opens with the right password: the one the child last set, or either one when the kill landed
///   between `changing` and `changed`. Anything else (damaged, unopenable, opened only by the other password) is
///   an **unreadable envelope**.
/// - A password login (the library's, as after a restart) redeems the stored refresh token. The issuer rotates on
///   every redemption and takes only the newest token of a family; presenting an older one revokes the family.
///   A **lost login** is a stored token the issuer refuses: the user must sign in with OpenID Connect again.
///   It is allowed only in two windows, and only when the envelope holds the token just before the issuer's
///   newest: after `received N` and before `sealed N` (the receive-to-fsync window: the envelope must hold token
///   N-1), or after `requesting N` and before `received N` (the answer in flight: it must hold the last token
///   received). Any other lost login is a miss. The child names each token it received by a keyed fingerprint
///   (``TokenFingerprint``), so the harness knows which one the envelope holds without a token in any output.
/// - When device unlock is on, it opens the same token as the password, or is refused with `isDeviceUnlockFailed`
///   (its secret belonged to a write the kill cut short).
///
/// After an unreadable envelope or a lost login the harness clears the user and signs in again, and goes on.
struct CrashHarness {
    let fixture: AuthFixture
    private let fingerprint = TokenFingerprint()
    private let userId: String
    /// The password the envelope opens with, as far as the harness knows, and the other one.
    private var password = "crash proof password one"
    private var other = "crash proof password two"
    /// The fingerprint of the refresh token stored when the next child starts.
    private var startFingerprint = ""
    private(set) var tally = CrashTally()

    /// A harness over `fixture`, with a user signed in and a password set.
    init(_ fixture: AuthFixture) async throws {
        self.fixture = fixture
        userId = try await fixture.register(password: password)
        startFingerprint = try await currentFingerprint()
    }

    private var store: String { fixture.root.appending(path: "store").path }

    /// The second planted defect: a login that keeps the rotated token in memory only yet says `sealed 1`, killed on
    /// that line; then the same checks as after a random kill.
    mutating func killMemoryOnlyLoginAfterItsAnswer() async throws {
        let child = try ProofChildProcess(
            crashLoopArguments + ["--memory-only"],
            input: childInput,
            caFile: fixture.caFile
        )
        try await kill(child, await child.kill(onLine: "sealed 1"))
    }

    /// Starts the crash loop and kills it after a random number of its lines (a round prints 21) and a random
    /// pause, then checks.
    mutating func killAtRandom() async throws {
        let child = try ProofChildProcess(crashLoopArguments, input: childInput, caFile: fixture.caFile)
        try await kill(child, await child.kill(afterLines: Int.random(in: 1...24), delay: Self.randomPause()))
    }

    private var crashLoopArguments: [String] {
        [
            "crash-loop", fixture.server.issuer.absoluteString, fixture.server.keyServiceURL.absoluteString, store,
            userId,
        ]
    }

    private var childInput: [String] { [password, other, fingerprint.keyLine] }

    /// Counts the kill and checks, or records that the child ended first.
    private mutating func kill(_ child: ProofChildProcess, _ result: (lines: [String], killed: Bool)) async throws {
        guard result.killed else {
            let errors = try await child.standardError()
            tally.misses.append("the child ended before the kill (\(child.termination)): \(errors)")
            try await signInAgain()
            return
        }
        tally.kills += 1
        try await check(after: result.lines)
    }

    /// A pause after a line: up to 1 ms (a write and its fsync follow the line), 10 ms, or 150 ms (a password
    /// change derives two keys), one in three each, so kills land in the short windows and in the long steps.
    static func randomPause() -> Duration {
        let longest = [1_000, 10_000, 150_000].randomElement()!
        return .microseconds(Int.random(in: 0...longest))
    }

    /// The planted defect: the harness's in-place writer (no temporary file, no rename), killed on the line it
    /// prints halfway through its write; then the same checks as after a random kill.
    mutating func killInPlaceWriterMidWrite() async throws {
        let child = try ProofChildProcess(["in-place-write", store, "--pause-mid-write"], input: [])
        try await kill(child, await child.kill(onLine: "mid-write"))
    }

    private mutating func check(after lines: [String]) async throws {
        // Each `changed` switched the password; a kill between `changing` and `changed` leaves either one.
        if lines.filter({ $0 == "changed" }).count % 2 == 1 { swap(&password, &other) }
        let midChange = lines.last(where: { $0 == "changing" || $0 == "changed" }) == "changing"
        if midChange { tally.killsInPasswordChange += 1 }
        let window = Window(lines)
        switch window {
        case .afterArrival: tally.killsInWindow += 1
        case .inFlight: tally.killsInFlight += 1
        case .outside: break
        }
        // The tokens the envelope may hold: the one stored at the start, then each one received, in order.
        let received =
            [startFingerprint]
            + lines.compactMap { line -> String? in
                let words = line.split(separator: " ")
                return words.count == 3 && words[0] == "received" ? String(words[2]) : nil
            }

        var error = await login(password)
        if let refused = error, refused.isWrongPassword, midChange {
            error = await login(other)
            if error == nil || error?.isWrongPassword == false {
                swap(&password, &other)
                tally.changesThatLanded += 1
            }
        }
        guard let error else {
            // The issuer took the stored token: it was the newest.
            startFingerprint = try await currentFingerprint()
            try await checkDeviceUnlock()
            return
        }
        if error.isLoginExpired {
            let stored = try await fixture.vault.userStorage.getStoredRefreshToken(userId: userId, password: password)
            let held = fingerprint.of(stored.token)
            switch window {
            case .afterArrival(let number) where received.count > number && received[number - 1] == held:
                tally.lostLoginsInWindow += 1
            case .inFlight where received.last == held:
                tally.lostLoginsInFlight += 1
            default:
                tally.lostLoginsOutsideWindow += 1
                tally.misses.append(
                    "kill \(tally.kills): a lost login outside the window (\(window), last line \(lines.last ?? "none"))"
                )
            }
        } else if Self.unreadable.contains(error.kind) {
            tally.unreadableEnvelopes += 1
            tally.misses.append(
                "kill \(tally.kills): the envelope did not open: \(error.kind) (last line \(lines.last ?? "none"))"
            )
        } else {
            tally.misses.append("kill \(tally.kills): the login after the kill failed: \(error)")
        }
        try await signInAgain()
    }

    /// The refusals that mean the envelope did not open with the right password.
    private static let unreadable: [VaultError.Kind] = [
        .damagedRecord, .envelopeDidNotOpen, .wrongPassword, .keyLockedHere, .unsupportedFormat,
    ]

    /// A password login through the library, as an app after a restart: nil when it worked.
    private func login(_ password: String) async -> VaultError? {
        do throws(VaultError) {
            _ = try await fixture.vault.auth.loginWithPassword(userId: userId, password: password)
            return nil
        } catch {
            return error
        }
    }

    private mutating func checkDeviceUnlock() async throws {
        let storage = fixture.vault.userStorage
        guard await storage.hasDeviceUnlock(userId: userId) else { return }
        let session = await fixture.vault.auth.refreshToken?.token
        do throws(VaultError) {
            let opened = try await storage.getStoredRefreshTokenViaDeviceUnlock(userId: userId)
            if opened.token == session {
                tally.deviceUnlockOpened += 1
            } else {
                tally.misses.append("kill \(tally.kills): device unlock opened another token than the password")
            }
        } catch {
            if error.isDeviceUnlockFailed {
                tally.deviceUnlockRefused += 1
            } else {
                tally.misses.append("kill \(tally.kills): device unlock failed with \(error.kind): \(error)")
            }
        }
    }

    /// Clears the user and signs in again by OpenID Connect with the current password.
    private mutating func signInAgain() async throws {
        try await fixture.vault.userStorage.clear(userId: userId)
        _ = try await fixture.register(password: password)
        startFingerprint = try await currentFingerprint()
    }

    private func currentFingerprint() async throws -> String {
        guard let token = await fixture.vault.auth.refreshToken else { throw FixtureError("no session after a login") }
        return fingerprint.of(token.token)
    }

    /// Where the child's last token line left it.
    enum Window: CustomStringConvertible {
        /// After `received N`, before `sealed N`.
        case afterArrival(Int)
        /// After `requesting N`, before `received N`.
        case inFlight(Int)
        case outside

        init(_ lines: [String]) {
            let last = lines.last {
                $0.hasPrefix("requesting ") || $0.hasPrefix("received ") || $0.hasPrefix("sealed ")
            }
            let words = last?.split(separator: " ") ?? []
            let number = words.count > 1 ? Int(words[1]) : nil
            switch (words.first, number) {
            case ("received", let number?): self = .afterArrival(number)
            case ("requesting", let number?): self = .inFlight(number)
            default: self = .outside
            }
        }

        var description: String {
            switch self {
            case .afterArrival(let number): "after received \(number)"
            case .inFlight(let number): "after requesting \(number)"
            case .outside: "outside"
            }
        }
    }
}
