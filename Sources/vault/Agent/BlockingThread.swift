import Foundation

/// Runs blocking system calls (socket reads, `waitpid`) on a thread of their own, so no thread of Swift's
/// cooperative pool ever waits on them.
enum BlockingThread {
    /// Runs `body` on a new thread and returns what it returns.
    static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }
}
