import Foundation
import Synchronization
import Testing
import VaultPOSIX

@Suite("The blocking-thread bridge")
struct BlockingThreadTests {
    struct Refusal: Error, Equatable {
        let code: Int
    }

    @Test("the call's value comes back to the caller")
    func value() async {
        let value = await BlockingThread.run("test-value") { 6 * 7 }
        #expect(value == 42)
    }

    @Test("the call's error comes back with its type kept")
    func typedError() async {
        do {
            _ = try await BlockingThread.run("test-error") { () throws(Refusal) -> Int in throw Refusal(code: 7) }
            Issue.record("no error came back")
        } catch {
            // `error` is a Refusal here, not `any Error`: the typed throw is kept.
            #expect(error == Refusal(code: 7))
        }
    }

    @Test("a cancelled caller still waits for the call and gets its value")
    func cancelledCallerGetsTheValue() async {
        let task = Task {
            await BlockingThread.run("test-cancel") { () -> Bool in
                // A blocking wait the cancellation cannot interrupt.
                usleep(20_000)
                return true
            }
        }
        task.cancel()
        #expect(await task.value)
    }

    /// A value whose last release is counted, as a store reservation's removes its file.
    final class Released: Sendable {
        let count: Counter
        init(_ count: Counter) { self.count = count }
        deinit { count.add() }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var current: Int { value.withLock { $0 } }
    }

    @Test("the caller holds the only reference to the value it got: the thread keeps none once it has resumed it")
    func threadKeepsNoReference() async {
        // A thread that released its copy after resuming the caller would let the value's deinit (a reservation's
        // unlink) run later, on that thread, after the caller had moved on. On two cores one run in many shows it.
        let released = Counter()
        var shared = 0
        for round in 1...2_000 {
            var value: Released? = await BlockingThread.run("test-release") { Released(released) }
            if !isKnownUniquelyReferenced(&value!) { shared += 1 }
            value = nil
            #expect(released.current == round, "the value outlived the caller's last reference")
            if released.current != round { break }
        }
        #expect(shared == 0, "\(shared) of 2000 values were still referenced by their thread")
    }

    #if os(Linux)
    @Test("the thread carries its name whole, as top, perf and /proc show it")
    func threadName() async throws {
        let name = "vault-reserve"
        let shown = await BlockingThread.run(name) { () -> String? in
            try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        }
        #expect(shown == name + "\n")
    }
    #endif
}
