import Foundation
import Synchronization
import VaultPOSIX

/// Holds SIGINT, SIGTERM and SIGHUP while a rotated refresh token is on its way to disk, so that Ctrl-C, `kill` or a
/// closed terminal cannot lose a login the way SIGKILL can.
///
/// Between sending a refresh and the fsync of the envelope that holds the rotated token, the issuer has already
/// retired the stored token: a process that dies there leaves a token the issuer takes for reuse, and the login is
/// gone. With ``install()``, one of these signals that arrives in that window is recorded and acted on as soon as the
/// envelope is on disk; outside it, the signal does at once what it did before.
///
/// Process-wide signal handling belongs to the app: nothing happens until it calls ``install()`` (the
/// `credential-vault` CLI does at start). The handlers compose:
/// - a signal this process ignores when ``install()`` runs (`nohup` ignores SIGHUP) stays ignored;
/// - a handler installed before ``install()`` is called instead of the default action, once the window closes;
/// - a handler installed after it (a password prompt that restores the terminal on SIGINT) takes over, and puts
///   this one back when it restores the handler it found.
public enum TerminationSignals {
    /// The signals held: interrupt, terminate, hang-up.
    public static let held: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Refreshes between their request and their fsync, in the whole process.
    private static let windows = Atomic<Int>(0)
    /// A signal that arrived in a window, 0 when none.
    private static let pending = Atomic<Int32>(0)
    /// The handlers found by ``install()``, by signal number: 0 for the default action, else a function pointer.
    /// Read from signal handlers (no lock, no allocation); written once, before any handler is installed.
    nonisolated(unsafe) private static let found = UnsafeMutablePointer<Int>.allocate(capacity: 65)
    private static let installed = Atomic<Bool>(false)

    /// Installs the handlers for ``held`` (once: later calls do nothing). Call it at start, before the first refresh.
    public static func install() {
        guard installed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
        else { return }
        // Touches the atomics so that their one-time initialisation never runs in a handler.
        _ = windows.load(ordering: .sequentiallyConsistent)
        _ = pending.load(ordering: .sequentiallyConsistent)
        found.initialize(repeating: 0, count: 65)
        for number in held {
            let before = signal(number, SIG_IGN)
            let address = unsafeBitCast(before, to: Int.self)
            if address == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            found[Int(number)] = address == unsafeBitCast(SIG_ERR, to: Int.self) ? 0 : address
            signal(number) { TerminationSignals.handle($0) }
        }
    }

    /// Runs `body` with the held signals waiting until it returns; a signal that arrived meanwhile is acted on then.
    /// Nests, and spans suspension points: the window is the process's, not a thread's.
    package static func holding<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(E) -> T
    ) async throws(E) -> T {
        windows.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer {
            if windows.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue == 0 { actOnPending() }
        }
        return try await body()
    }

    /// Returns once no refresh is between its request and its fsync (it checks every 10 ms): for an app that ends on
    /// a signal it handles itself (the CLI's agent on SIGTERM) before it exits, installed or not.
    public static func waitUntilNothingHeld() async {
        while windows.load(ordering: .sequentiallyConsistent) > 0 { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// The handler: only async-signal-safe work (atomics, signal, kill, the previous handler).
    private static func handle(_ number: Int32) {
        guard windows.load(ordering: .sequentiallyConsistent) > 0 else { return act(on: number) }
        _ = pending.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
        // The window may have closed between the check and the record: then nobody else acts on it.
        if windows.load(ordering: .sequentiallyConsistent) == 0 { actOnPending() }
    }

    private static func actOnPending() {
        let number = pending.exchange(0, ordering: .sequentiallyConsistent)
        if number != 0 { act(on: number) }
    }

    /// What the signal did before ``install()``: the handler found then, else the default action (the process ends
    /// by this signal, as its parent expects).
    private static func act(on number: Int32) {
        let address = found[Int(number)]
        if address != 0 {
            unsafeBitCast(address, to: (@convention(c) (Int32) -> Void).self)(number)
            return
        }
        signal(number, SIG_DFL)
        // To the process, not this thread (raise): a thread of Swift's pool blocks these signals, and may end.
        kill(getpid(), number)
    }
}
