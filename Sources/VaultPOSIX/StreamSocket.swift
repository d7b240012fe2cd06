/// The stream-socket calls the package's hand-written servers and clients share (the loopback redirect receiver, the
/// agent's Unix socket and its clients): sockets that no child inherits, writes that never raise SIGPIPE, reads
/// bounded by a deadline, EINTR retried. Every call here may block: callers run them on a thread of their own
/// (``BlockingThread``), never on Swift's cooperative pool.
package enum StreamSocket {
    /// The `send` flags that make a write to a closed peer fail with `EPIPE` instead of raising SIGPIPE
    /// (`MSG_NOSIGNAL`; on Darwin the socket option ``openConnection(acceptedOn:)`` sets does it instead).
    package static var noSignal: Int32 {
        #if canImport(Darwin)
        0
        #else
        Int32(MSG_NOSIGNAL)
        #endif
    }

    /// A new stream socket of `family` (`AF_INET`, `AF_INET6`, `AF_UNIX`), closed on exec, non-blocking when asked.
    /// - Parameters:
    ///   - family: the address family.
    ///   - nonBlocking: whether calls on it return `EAGAIN` instead of waiting.
    /// - Returns: the descriptor, or -1 with `errno` set.
    package static func open(family: Int32, nonBlocking: Bool = false) -> Int32 {
        #if canImport(Darwin)
        let fd = socket(family, SOCK_STREAM, 0)
        guard fd >= 0 else { return fd }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return fd
        #else
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return socket(family, type, 0)
        #endif
    }

    /// Takes one waiting connection from the listening socket `listener`, non-blocking and closed on exec (and on
    /// Darwin set not to raise SIGPIPE); nil when none waits or the call failed (`errno` says which).
    package static func openConnection(acceptedOn listener: Int32) -> Int32? {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// Reads what has arrived on `fd` into `buffer`, waiting (with `poll`) at most until `deadline` when given; EINTR
    /// is retried.
    /// - Parameters:
    ///   - fd: a socket or a pipe.
    ///   - buffer: where the bytes go, from its start.
    ///   - deadline: the latest moment to wait until; nil waits as long as the descriptor's own timeout lets it.
    /// - Returns: the count read; 0 when the peer closed, or the deadline passed first; -1 when the read failed.
    package static func read(_ fd: Int32, into buffer: inout [UInt8], until deadline: ContinuousClock.Instant?) -> Int {
        while true {
            if let deadline, !Poll.readable(fd, until: deadline) { return 0 }
            let count = buffer.withUnsafeMutableBytes { VaultPOSIX.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            return count
        }
    }

    /// Writes all of `bytes` to a socket (with `send` and ``noSignal``), or with `pipe` to a pipe (with `write`:
    /// SIGPIPE must then be ignored by the process); EINTR is retried.
    /// - Parameters:
    ///   - fd: the socket or pipe.
    ///   - bytes: what to write.
    ///   - pipe: whether `fd` is a pipe rather than a socket.
    /// - Returns: false when the peer is gone or a write timed out.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], pipe: Bool = false) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                pipe
                    ? write(fd, $0.baseAddress! + sent, $0.count - sent)
                    : send(fd, $0.baseAddress! + sent, $0.count - sent, noSignal)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
