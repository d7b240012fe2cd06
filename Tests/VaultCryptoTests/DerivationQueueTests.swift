import Foundation
import Testing
import VaultTestSupport

@testable import VaultCrypto

/// Waiting for a place to derive costs a thread, so the number waiting is capped: past it a derivation is
/// refused at once, and a flood of logins cannot grow the process by a thread each. These tests use a queue
/// of their own, so the process's Argon2id queue, which other tests use at the same time, is never full.
@Suite("Derivation queue", .tags(.alone), .enabled(inTier: .alone))
struct DerivationQueueTests {
    @Test("Argon2id lets 256 derivations wait by default, and the limit can be changed")
    func argon2idDefault() {
        #expect(Argon2id.defaultMaximumWaitingDerivations == 256)
        #expect(Argon2id.maximumWaitingDerivations >= 256)
        // Raised and put back: never lower, so derivations other tests start meanwhile are never refused.
        Argon2id.maximumWaitingDerivations = 1_000
        #expect(Argon2id.queue.maximumWaiting == 1_000)
        Argon2id.maximumWaitingDerivations = Argon2id.defaultMaximumWaitingDerivations
        #expect(Argon2id.maximumWaitingDerivations == 256)
    }

    @Test("with every place taken and the cap reached, the next derivation is refused at once with busy")
    func capRefusesTheNext() async throws {
        let cap = 3
        let queue = DerivationQueue(maximumRunning: 1, maximumWaiting: cap)
        // The one place is free, so this returns at once; while it is held, every admitted derivation waits.
        queue.slots.wait()
        let results = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<cap {
                    group.addTask { try await queue.run { .success(index) } }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted()
            }
        }
        // Waits for the count, not for a clock: the bound only keeps a broken queue from hanging the run.
        for _ in 0..<6_000 where queue.occupancy.waiting < cap { try await Task.sleep(for: .milliseconds(10)) }
        #expect(queue.occupancy.waiting == cap)

        await #expect(throws: CryptoError(.busy, "")) { _ = try await queue.run { .success(-1) } }
        let refusal = await #expect(throws: CryptoError.self) { _ = try await queue.run { .success(-1) } }
        #expect(refusal?.reason.contains("try again") == true)
        #expect(queue.occupancy.refused == 2)
        #expect(queue.occupancy.waiting == cap)
        #expect(queue.occupancy.running == 0)

        queue.slots.signal()
        #expect(try await results.value == Array(0..<cap))
        #expect(queue.occupancy == DerivationQueue.Occupancy(waiting: 0, running: 0, mostRunning: 1, refused: 2))
        // Once they have run, there is room again.
        #expect(try await queue.run { .success(7) } == 7)
    }

    @Test("a cap of zero refuses every derivation; a negative cap counts as zero")
    func zeroCap() async throws {
        let queue = DerivationQueue(maximumRunning: 2, maximumWaiting: -4)
        #expect(queue.maximumWaiting == 0)
        await #expect(throws: CryptoError(.busy, "")) { _ = try await queue.run { .success(1) } }
        queue.maximumWaiting = 1
        #expect(try await queue.run { .success(1) } == 1)
    }

    @Test("a derivation's own failure comes back as it is")
    func failurePassesThrough() async {
        let queue = DerivationQueue(maximumRunning: 1, maximumWaiting: 1)
        await #expect(throws: CryptoError(.keyDerivationFailed, "")) {
            let _: Int = try await queue.run { .failure(CryptoError(.keyDerivationFailed, "out of memory")) }
        }
    }
}
