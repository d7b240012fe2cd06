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
}
