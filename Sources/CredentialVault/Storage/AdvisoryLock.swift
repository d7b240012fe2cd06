import Foundation
import VaultPOSIX

/// An exclusive advisory lock (flock) on a file, held until the value is released.
///
/// The one wait for a lock in this package: it polls without blocking a thread, gives up at a deadline,
/// and stops at once when the waiting task is cancelled.
package final class AdvisoryLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        FileLock.unlock(fd)
        close(fd)
    }

    /// Lets the next holder in now rather than when this value is released.
    package func release() {
        FileLock.unlock(fd)
    }

    /// Waits until the lock on `path` (created 0600 when missing) is free, then holds it.
    /// - Parameters:
    ///   - path: the lock file.
    ///   - timeout: how long to wait for another holder.
    ///   - whileWaiting: called once, when the lock is found taken.
    /// - Returns: the held lock; it is released when the value is, or at ``release()``.
    /// - Throws: ``VaultError``: `.lockTimeout` after `timeout`, `.cancelled` when the task is cancelled,
    ///   `.fileSystemFailed` when the file cannot be opened.
    package static func acquire(
        path: String,
        timeout: Duration,
        whileWaiting: () -> Void = {}
    ) async throws(VaultError) -> AdvisoryLock {
        let fd = FileLock.open(path)
        guard fd >= 0 else { throw .fileSystem("open", path: path) }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Duration.milliseconds(1)
        var told = false
        while true {
            let attempt = FileLock.tryExclusive(fd)
            if attempt == .acquired { return AdvisoryLock(fd: fd) }
            if case .failed(let errorNumber) = attempt {
                close(fd)
                throw .fileSystem("lock", path: path, String(cString: strerror(errorNumber)))
            }
            guard clock.now < deadline else {
                close(fd)
                throw .lockTimeout(path: path, waited: timeout)
            }
            if !told {
                whileWaiting()
                told = true
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                close(fd)
                throw .cancelled
            }
            pause = min(pause * 2, .milliseconds(50))
        }
    }
}
