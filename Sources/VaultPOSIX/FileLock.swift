/// Exclusive advisory locks (`flock(2)`) on open files: the one place the package calls `flock`. The kernel drops a
/// lock when its descriptor is closed or its process ends, kill -9 included.
package enum FileLock {
    /// What one try for the lock came to.
    package enum Attempt: Sendable, Equatable {
        /// The lock is held now, through the descriptor tried.
        case acquired
        /// Another holder has it (or a signal interrupted the try): try again later.
        case taken
        /// The call failed for another reason, with its error number.
        case failed(errorNumber: Int32)
    }

    /// Opens (creating it 0600 when missing, never following a symbolic link) the lock file at `path`.
    /// - Returns: the descriptor, or -1 with `errno` set.
    package static func open(_ path: String) -> Int32 {
        VaultPOSIX.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }

    /// Tries once, without waiting, for the exclusive lock on `descriptor`.
    package static func tryExclusive(_ descriptor: Int32) -> Attempt {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return .acquired }
        let code = errno
        return code == EWOULDBLOCK || code == EINTR ? .taken : .failed(errorNumber: code)
    }

    /// Tries for the exclusive lock on `descriptor` until `deadline`, sleeping the calling thread between tries
    /// (from 100 microseconds, doubling up to 10 milliseconds): for short holds, where a stuck holder must end in
    /// an error instead of a hang.
    /// - Returns: `.acquired`; `.taken` when the deadline passed first; `.failed` with the error number otherwise.
    package static func waitExclusive(_ descriptor: Int32, until deadline: ContinuousClock.Instant) -> Attempt {
        var pause: useconds_t = 100
        while true {
            let attempt = tryExclusive(descriptor)
            guard attempt == .taken, ContinuousClock.now < deadline else { return attempt }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// Lets the next holder in.
    package static func unlock(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
    }
}
