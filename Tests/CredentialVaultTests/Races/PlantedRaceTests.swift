import Foundation
import Synchronization
import Testing

/// The defect `make proof-races-planted` plants to show that the races proof can fail: two threads increment one
/// counter with no synchronisation. Built and run with ThreadSanitizer, the test must end in its race report;
/// everywhere else it is skipped.
@Suite("planted data race (make proof-races-planted)")
struct PlantedRaceTests {
    /// Shared by both threads and guarded by nothing: the planted race.
    nonisolated(unsafe) static var counter = 0

    /// Relaxed counters: both threads start incrementing once both run, and neither ends before the other is done.
    /// A relaxed store and load order nothing for ThreadSanitizer (no happens-before), so the increments stay
    /// unordered; without them, one thread's end and the next one's start (under a lock) may order them.
    static let running = Atomic<Int>(0)
    static let done = Atomic<Int>(0)

    /// ThreadSanitizer missed a single round in about two runs out of five on this machine: rounds are repeated
    /// (the first report ends the process), so a miss in every round is a sanitizer that does not work.
    static let rounds = 20

    static let planted = ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_PLANTED_RACE"] == "1"

    @Test(
        "two threads increment one unguarded counter: ThreadSanitizer must report a data race",
        .enabled(if: planted, "runs only in make proof-races-planted (CREDENTIAL_VAULT_PLANTED_RACE=1)")
    )
    func twoThreadsIncrement() async {
        for _ in 0..<Self.rounds {
            Self.running.store(0, ordering: .relaxed)
            Self.done.store(0, ordering: .relaxed)
            // Joined through a dispatch group's notification, so no cooperative thread blocks on the threads.
            let finished = DispatchGroup()
            for _ in 0..<2 {
                finished.enter()
                Thread {
                    Self.running.add(1, ordering: .relaxed)
                    while Self.running.load(ordering: .relaxed) < 2 {}
                    for _ in 0..<10_000 { Self.counter += 1 }
                    Self.done.add(1, ordering: .relaxed)
                    while Self.done.load(ordering: .relaxed) < 2 {}
                    finished.leave()
                }
                .start()
            }
            await withCheckedContinuation { continuation in
                finished.notify(queue: .global()) { continuation.resume() }
            }
        }
        #expect(Self.counter > 0)
    }
}
