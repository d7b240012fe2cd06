import Foundation
import Synchronization
import VaultCrypto

/// Every place Argon2id derivations run in, held by the test: a call that ends while they are held derived
/// nothing, because a derivation waits for a place before it starts.
enum Argon2idPlaces {
    /// Runs `body` while this process's every Argon2id place is held.
    ///
    /// - Returns: what `body` returned, and whether it finished while the places were still held. A
    ///   derivation in `body` would wait until a safety deadline gives the places back; nothing is asserted
    ///   about that time, it only keeps such a wait from hanging the run.
    static func withAllHeld<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async rethrows -> (result: Result, finishedWhileHeld: Bool) {
        let places = Argon2id.maximumConcurrentDerivations
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let (events, event) = AsyncStream<Void>.makeStream()
        // A thread of its own: taking a place blocks, which must never happen on the cooperative pool.
        Thread {
            for _ in 0..<places { Argon2id.slots.wait() }
            event.yield()
            let finished = done.wait(timeout: .now() + 60) == .success
            outcome.finished.withLock { $0 = finished }
            for _ in 0..<places { Argon2id.slots.signal() }
            event.yield()
            event.finish()
        }
        .start()
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()
        let result: Result
        do {
            result = try await body()
        } catch {
            done.signal()
            _ = await iterator.next()
            throw error
        }
        done.signal()
        _ = await iterator.next()
        return (result, outcome.finished.withLock { $0 })
    }

    private final class Outcome: Sendable {
        let finished = Mutex(false)
    }
}
