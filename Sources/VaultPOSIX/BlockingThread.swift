/// Runs a blocking call (an fsync, a socket read, `waitpid`, an Argon2id derivation) on an operating-system thread
/// of its own and resumes the caller with what it returned, so no thread of Swift's cooperative pool ever waits on
/// it: on a two-core machine that pool has two threads, and one of them held in an fsync stalls every task of the
/// process meanwhile, an in-process server's included.
///
/// One thread per call, started for it and ended with it. The call is not cancellable from outside: a cancelled
/// task still waits for it to return, as every caller relies on (a derivation's place, a listener's descriptors and a
/// child's exit are always given back). A call that must stop early watches a flag or a deadline of its own, as the
/// loopback redirect receiver's `stop()` and the agent's socket deadlines do. A long-lived serial thread (the agent's
/// accept loop) is not this: it is a thread started once, not a call waited on.
package enum BlockingThread {
    /// The longest thread name Linux keeps whole, in bytes.
    package static let maximumNameLength = 15

    /// Runs `body` on a new thread named `name` and returns what it returns, or throws what it throws.
    /// - Parameters:
    ///   - name: the thread's name, as debuggers and `/proc/PID/task/*/comm` show it: at most 15 bytes.
    ///   - body: the blocking work; it runs to its end even when the waiting task is cancelled.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, with its type kept.
    package static func run<Value: Sendable, Failure: Error>(
        _ name: String,
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            start(name) {
                // The result moves into the caller: the thread keeps no reference to it after the resume, so
                // the caller's last release is the last (a store reservation's deinit removes its file then).
                continuation.resume(returning: Result { () throws(Failure) in try body() })
            }
        }
        return try result.get()
    }

    /// Starts `work` on a new detached thread named `name`; the thread ends when `work` returns.
    /// - Parameters:
    ///   - name: the thread's name: at most 15 bytes (``maximumNameLength``).
    ///   - work: what the thread runs.
    package static func start(_ name: String, _ work: @escaping @Sendable () -> Void) {
        // Linux keeps 15 bytes of a thread's name: a longer one reads as its prefix in top, perf and a debugger, where
        // every "credential-vault.*" thread once looked the same.
        assert(name.utf8.count <= maximumNameLength, "the thread name \(name) is longer than 15 bytes")
        let box = Unmanaged.passRetained(ThreadStart(name: name, work: work)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(
            &thread,
            &attributes,
            { pointer in
                #if canImport(Darwin)
                let start = Unmanaged<ThreadStart>.fromOpaque(pointer).takeRetainedValue()
                #else
                let start = Unmanaged<ThreadStart>.fromOpaque(pointer!).takeRetainedValue()
                #endif
                start.nameCurrentThread()
                start.work()
                return nil
            },
            box
        )
        // As Foundation's Thread does: a process that cannot start a thread cannot go on.
        precondition(result == 0, "cannot start a thread for \(name): error \(result)")
    }
}
