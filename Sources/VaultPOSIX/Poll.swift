/// Waiting on descriptors with `poll(2)` against a deadline.
package enum Poll {
    /// Waits until `fd` has something to read (or its peer hung up), at most until `deadline`; EINTR is retried.
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - deadline: the latest moment to wait until.
    /// - Returns: false when the deadline passed first; true when the descriptor is ready, or `poll` failed (the read
    ///   that follows then reports the failure).
    package static func readable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, milliseconds(left))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }
        }
    }

    /// `duration` in whole milliseconds for `poll`'s timeout, rounded up so a deadline is never polled short of (0
    /// for a duration that is not positive).
    package static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
