import Foundation
import Testing

@testable import KeyServicePostgres

/// A storage call past its deadline answers without waiting for a statement that ignores its cancellation.
@Suite("PostgreSQL storage deadline")
struct DeadlineTests {
    @Test("a call that ignores cancellation: the deadline's error comes while the call still runs")
    func callIgnoringCancellation() async throws {
        let finished = Gate()
        let release = Gate()
        await #expect(throws: PostgresStorageError.self) {
            try await withDeadline(.milliseconds(200), doing: "a stalled statement") {
                // Like a statement on a connection stalled in the network: no cancellation reaches it (a detached
                // task is not cancelled with its waiter). It ends when the test releases it, or after a minute.
                await Task.detached { await release.wait(atMost: .seconds(60)) }.value
                finished.open()
                return 1
            }
        }
        // A deadline that waited for its call would have thrown only after the call finished.
        let stillRunning = !finished.isOpen
        #expect(stillRunning)
        release.open()
    }

    @Test("a call that finishes first gives its value; one that throws first gives its error")
    func callFirst() async throws {
        #expect(try await withDeadline(.seconds(60), doing: "a quick statement") { 7 } == 7)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(60), doing: "a refused statement") { () async throws -> Int in
                throw Refused()
            }
        }
    }

    @Test("a cancelled caller cancels its call")
    func callerCancelled() async throws {
        let task = Task {
            try await withDeadline(.seconds(60), doing: "a long statement") {
                try await Task.sleep(for: .seconds(60))
                return 1
            }
        }
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
    }
}
