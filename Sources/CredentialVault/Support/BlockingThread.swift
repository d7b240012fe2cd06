import Foundation

/// Runs blocking system calls (an fsync, socket reads, `waitpid`) on a thread of their own, so no thread of Swift's
/// cooperative pool ever waits on them: on a two-core machine that pool has two threads, and one of them held in an
/// fsync stalls every task of the process meanwhile, an in-process server's included.
package enum BlockingThread {
    /// Runs `body` on a new thread and returns what it returns.
    package static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }
}
