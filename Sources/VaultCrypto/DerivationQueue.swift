package import Foundation
import Synchronization
import VaultPOSIX

/// Places for running expensive derivations, and a bounded number of places to wait for one.
///
/// Each admitted derivation runs on a thread of its own, never on Swift's cooperative pool, and waits there
/// for a place to run in. Waiting costs a thread, so the number waiting is capped: past the cap a derivation
/// is refused at once with ``CryptoError/Code/busy``, and a server flooded with logins keeps a bounded
/// number of threads instead of one per request.
package final class DerivationQueue: Sendable {
    /// Derivations waiting and running, counted so tests can check the limits without a clock.
    package struct Occupancy: Sendable, Equatable {
        /// Derivations admitted and waiting for a place in ``DerivationQueue/slots``.
        package var waiting = 0
        /// Derivations running now.
        package var running = 0
        /// The most derivations that ever ran at once.
        package var mostRunning = 0
        /// Derivations refused because ``DerivationQueue/maximumWaiting`` were waiting already.
        package var refused = 0
    }

    /// How many derivations may run at once.
    package let maximumRunning: Int
    /// The places for running derivations; a derivation's own thread waits here. Tests may hold every place
    /// to keep derivations waiting.
    package let slots: DispatchSemaphore

    private struct State {
        var occupancy = Occupancy()
        var maximumWaiting: Int
    }

    private let state: Mutex<State>

    /// A queue running at most `maximumRunning` derivations (at least one) with at most `maximumWaiting`
    /// waiting (at least none).
    package init(maximumRunning: Int, maximumWaiting: Int) {
        self.maximumRunning = max(1, maximumRunning)
        slots = DispatchSemaphore(value: self.maximumRunning)
        state = Mutex(State(maximumWaiting: max(0, maximumWaiting)))
    }

    /// How many derivations may wait for a place; a change applies to derivations that arrive later.
    package var maximumWaiting: Int {
        get { state.withLock { $0.maximumWaiting } }
        set { state.withLock { $0.maximumWaiting = max(0, newValue) } }
    }

    /// The counts now: a snapshot.
    package var occupancy: Occupancy { state.withLock { $0.occupancy } }

    /// Runs `work` on a thread of its own once a place is free, at a lower priority than the rest of the
    /// process.
    /// - Throws: ``CryptoError`` `.busy`, at once and without starting a thread, when ``maximumWaiting``
    ///   derivations are waiting already; else what `work` returns as its failure.
    package func run<Value: Sendable>(
        _ work: @escaping @Sendable () -> Result<Value, CryptoError>
    ) async throws(CryptoError) -> Value {
        let admitted = state.withLock { state in
            guard state.occupancy.waiting < state.maximumWaiting else {
                state.occupancy.refused += 1
                return false
            }
            state.occupancy.waiting += 1
            return true
        }
        guard admitted else {
            throw CryptoError(
                .busy,
                "too many password checks at once (\(maximumWaiting) waiting already); try again in a moment"
            )
        }
        return try await BlockingThread.run("vault-argon2id") { [self] () throws(CryptoError) -> Value in
            // Seconds of CPU nobody waits on interactively: it yields the cores to everything else (nice 10 for this
            // thread alone on Linux), so many concurrent logins never stall request handling. Best effort: if the
            // kernel refuses, the slots still leave a core free.
            ThreadPriority.lowerCurrentThread()
            slots.wait()
            state.withLock { state in
                state.occupancy.waiting -= 1
                state.occupancy.running += 1
                state.occupancy.mostRunning = max(state.occupancy.mostRunning, state.occupancy.running)
            }
            let result = work()
            state.withLock { $0.occupancy.running -= 1 }
            slots.signal()
            return try result.get()
        }
    }
}
