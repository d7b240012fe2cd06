import Foundation
import Testing

/// The defect `make proof-races-planted` plants to show that the races proof can fail: two threads increment one
/// counter with no synchronisation. Built and run with ThreadSanitizer, the test must end in its data race report;
/// everywhere else it is skipped.
@Suite("planted data race (make proof-races-planted)")
struct PlantedRaceTests {
    /// Shared by both threads and guarded by nothing: the planted race.
    nonisolated(unsafe) static var counter = 0

    static let planted = ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_PLANTED_RACE"] == "1"

    @Test(
        "two threads increment one unguarded counter: ThreadSanitizer must report a data race",
        .enabled(if: planted, "runs only in make proof-races-planted (CREDENTIAL_VAULT_PLANTED_RACE=1)")
    )
    func twoThreadsIncrement() async {
        // Long enough loops that the threads overlap (no thread-exit bookkeeping can order one after the other);
        // joined through a dispatch group's notification, so no cooperative thread blocks on the threads.
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                for _ in 0..<1_000_000 { Self.counter += 1 }
                group.leave()
            }
            .start()
        }
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        #expect(Self.counter > 0)
    }
}
