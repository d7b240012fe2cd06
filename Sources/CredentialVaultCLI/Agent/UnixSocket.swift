import Foundation
import VaultPOSIX

/// Blocking Unix-domain stream sockets for the agent and its clients. Every call here blocks: callers run them on a
/// thread of their own (``BlockingThread``), never on Swift's cooperative pool.
enum UnixSocket {
    /// The longest line either side reads: a request or an answer (an access token is at most a few KiB).
    static let maximumLine = 64 * 1024

    /// A socket call that failed, with errno's text: holds no secret.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        let code: Int32

        init(_ call: String, code: Int32 = errno) {
            self.code = code
            description = "\(call): \(String(cString: strerror(code)))"
        }
    }

    /// A listening socket at `path`, created 0600 (the umask covers the moment between bind and chmod).
    static func listen(at path: String) throws -> Int32 {
        var address = try address(path)
        let fd = StreamSocket.open(family: AF_UNIX)
        guard fd >= 0 else { throw Failure("socket") }
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(previous)
        guard bound == 0 else {
            let failure = Failure("bind \(path)")
            close(fd)
            throw failure
        }
        guard chmod(path, 0o600) == 0, VaultPOSIX.listen(fd, 64) == 0 else {
            let failure = Failure("listen \(path)")
            close(fd)
            unlink(path)
            throw failure
        }
        return fd
    }

    /// A connection to `path`; nil when nothing listens there (no file, or a socket file nobody serves).
    /// `timeout` bounds the connect too: a listener whose queue is full (an agent that stopped accepting) makes
    /// connect wait, and this throws with `EAGAIN` once it has waited that long.
    static func connect(to path: String, timeout: TimeInterval) throws -> Int32? {
        var address = try address(path)
        let fd = StreamSocket.open(family: AF_UNIX)
        guard fd >= 0 else { throw Failure("socket") }
        // A Unix socket's blocking connect waits at most the send timeout.
        setTimeout(fd, seconds: timeout)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                VaultPOSIX.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            if [ENOENT, ECONNREFUSED, ENOTDIR].contains(code) { return nil }
            throw Failure("connect \(path)", code: code)
        }
        return fd
    }

    /// Bounds every later read and write on `fd`, so a client that sends nothing cannot hold a thread forever.
    static func setTimeout(_ fd: Int32, seconds: TimeInterval) {
        var value = timeval()
        value.tv_sec = .init(seconds)
        value.tv_usec = .init(seconds.truncatingRemainder(dividingBy: 1) * 1e6)
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, size)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, size)
    }

    /// One line (without its newline) from a socket or a pipe; nil when the peer closed first, timed out, or sent more
    /// than the limit. With a `deadline`, the whole line must have arrived by then: a peer that sends a byte now and
    /// then cannot stretch one request without limit (each read's own timeout would let it).
    static func readLine(_ fd: Int32, deadline: ContinuousClock.Instant? = nil) -> [UInt8]? {
        var line: [UInt8] = []
        line.reserveCapacity(4096)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while line.count <= maximumLine {
            let count = StreamSocket.read(fd, into: &buffer, until: deadline)
            guard count > 0 else { return nil }
            if let newline = buffer[0..<count].firstIndex(of: UInt8(ascii: "\n")) {
                line.append(contentsOf: buffer[0..<newline])
                return line
            }
            line.append(contentsOf: buffer[0..<count])
        }
        return nil
    }

    /// Writes `bytes` and a newline to a socket (or with `pipe` to a pipe, where SIGPIPE must be ignored);
    /// false when the peer is gone or the write timed out.
    @discardableResult
    static func writeLine(_ fd: Int32, _ bytes: [UInt8], pipe: Bool = false) -> Bool {
        StreamSocket.writeAll(fd, bytes + [UInt8(ascii: "\n")], pipe: pipe)
    }

    private static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw CLIError.configuration(
                "the agent's socket path \(path) is \(bytes.count) bytes long, more than a Unix socket takes "
                    + "(\(capacity - 1)): set XDG_RUNTIME_DIR to a shorter directory"
            )
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }
}
