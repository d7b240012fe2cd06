import Foundation
import Synchronization
import VaultCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives one OAuth redirect on 127.0.0.1 at a port the system picks (RFC 8252 section 7.3), with
/// plain sockets so the library needs no server framework.
///
/// Any process on the machine can connect to the port, so no request it sends ends the login but the one
/// to the redirect path that carries this login's `state`. Connections are served side by side on one
/// thread with `poll`, each with a short deadline of its own for sending its request: a client that
/// connects and stalls, or drips bytes, is dropped at its deadline and delays no other.
final class LoopbackRedirectReceiver: Sendable {
    /// The port the system gave.
    let port: UInt16
    private let socket: Int32
    private let lifecycle = Mutex(Lifecycle())
    /// How long a connection may take to send its request, from the moment it is accepted.
    private let connectionTimeout: Duration

    /// Requests larger than this are refused; a redirect is a few hundred bytes.
    private static let maximumRequestSize = 16_384
    /// Connections read at once; past it the oldest is dropped for the newest.
    private static let maximumConnections = 32
    /// The longest `poll` waits, so a ``stop()`` is noticed soon.
    private static let tick = Duration.milliseconds(200)

    /// Who closes the socket: ``stop()`` when no wait runs, else the waiting thread when it ends, so the
    /// descriptor is never closed under a `poll` that may then watch a reused number.
    private struct Lifecycle {
        var stopped = false
        var waiting = false
        var socketClosed = false
    }

    /// A listener on 127.0.0.1; `connectionTimeout` bounds how long each connection may take to send its
    /// request.
    init(connectionTimeout: Duration = .seconds(5)) throws(VaultError) {
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = Glibc.socket(AF_INET, type, 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        if fd >= 0 { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        #endif
        guard fd >= 0 else { throw .openIDConnectFailed("cannot open a loopback socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw .openIDConnectFailed("cannot listen on 127.0.0.1")
        }
        var actual = sockaddr_in()
        var actualLength = length
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        socket = fd
        port = UInt16(bigEndian: actual.sin_port)
        self.connectionTimeout = connectionTimeout
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:{port}{path}`.
    func redirectURI(path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// Stops listening; a pending wait ends with an error.
    func stop() {
        let closeNow = lifecycle.withLock { lifecycle in
            lifecycle.stopped = true
            guard !lifecycle.waiting, !lifecycle.socketClosed else { return false }
            lifecycle.socketClosed = true
            return true
        }
        if closeNow { close(socket) }
    }

    /// Waits for a request to `path` whose `state` query parameter is `state`, answers it with a page that
    /// says the login can continue in the terminal or app, and returns its URL (an error redirect included:
    /// it is the issuer's answer to this login).
    ///
    /// Every other request is answered and the wait goes on: another path (a browser's favicon request) gets
    /// a 404, the redirect path without this login's `state` a 400. The wait runs on a thread of its own,
    /// never blocking Swift's cooperative pool.
    /// - Throws: `.openIDConnectFailed` when `timeout` passes first or ``stop()`` is called.
    func waitForRedirect(path: String, state: String, timeout: Duration) async throws(VaultError) -> URL {
        let deadline = ContinuousClock.now + timeout
        let begun = lifecycle.withLock { lifecycle in
            guard !lifecycle.stopped, !lifecycle.waiting else { return false }
            lifecycle.waiting = true
            return true
        }
        guard begun else { throw .openIDConnectFailed("the login was cancelled") }
        let expected = Expectation(path: path, state: state)
        let result: Result<URL, VaultError> = await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                let result = serve(expected, until: deadline)
                endWaiting()
                continuation.resume(returning: result)
            }
            thread.name = "credential-vault.loopback-redirect"
            thread.start()
        }
        return try result.get()
    }

    private func endWaiting() {
        let closeNow = lifecycle.withLock { lifecycle in
            lifecycle.waiting = false
            guard lifecycle.stopped, !lifecycle.socketClosed else { return false }
            lifecycle.socketClosed = true
            return true
        }
        if closeNow { close(socket) }
    }

    // MARK: Serving

    /// The redirect that ends the wait.
    private struct Expectation {
        let path: String
        let state: String
    }

    /// An accepted connection and what it has sent so far.
    private struct Connection {
        let fd: Int32
        let deadline: ContinuousClock.Instant
        var received: [UInt8] = []
    }

    private func serve(_ expected: Expectation, until deadline: ContinuousClock.Instant) -> Result<URL, VaultError> {
        var connections: [Connection] = []
        defer { for connection in connections { close(connection.fd) } }
        while true {
            if lifecycle.withLock({ $0.stopped }) { return .failure(.openIDConnectFailed("the login was cancelled")) }
            let now = ContinuousClock.now
            guard now < deadline else {
                return .failure(.openIDConnectFailed("no redirect arrived within the time allowed"))
            }
            // A connection past its deadline is dropped unanswered: it had its time.
            connections.removeAll { connection in
                guard connection.deadline <= now else { return false }
                close(connection.fd)
                return true
            }
            var pollers = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            pollers += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let wake = connections.map(\.deadline).reduce(deadline, min)
            guard poll(&pollers, nfds_t(pollers.count), Self.milliseconds(min(Self.tick, wake - now))) > 0 else {
                continue
            }
            // From the last, so removing one leaves the indices of those still to visit unchanged.
            for index in connections.indices.reversed() where pollers[index + 1].revents != 0 {
                let progress = read(&connections[index])
                if case .incomplete = progress { continue }
                let fd = connections.remove(at: index).fd
                defer { close(fd) }
                if case .complete(let line) = progress, let url = answer(fd, requestLine: line, expected) {
                    return .success(url)
                }
            }
            if pollers[0].revents != 0 { acceptWaiting(into: &connections) }
        }
    }

    /// Accepts every connection waiting, each with a deadline from now.
    private func acceptWaiting(into connections: inout [Connection]) {
        for _ in 0..<Self.maximumConnections {
            let fd = accept(socket, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            if connections.count >= Self.maximumConnections { close(connections.removeFirst().fd) }
            connections.append(Connection(fd: fd, deadline: ContinuousClock.now + connectionTimeout))
        }
    }

    /// Where a connection's request stands after a read.
    private enum ReadProgress {
        /// More is to come.
        case incomplete
        /// Closed by the client, failed, or too large: closed unanswered.
        case dropped
        /// The head is complete; this is its first line.
        case complete(String)
    }

    /// Reads what `connection` has sent, without waiting for more.
    private func read(_ connection: inout Connection) -> ReadProgress {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .incomplete }
            guard count > 0 else { return .dropped }
            connection.received += buffer[0..<count]
            if connection.received.count > Self.maximumRequestSize { return .dropped }
            let head = connection.received
            if head.firstRange(of: [13, 10, 13, 10]) != nil || head.firstRange(of: [10, 10]) != nil {
                let lineEnd = head.firstIndex { $0 == 13 || $0 == 10 } ?? head.endIndex
                return .complete(String(decoding: head[..<lineEnd], as: UTF8.self))
            }
        }
    }

    /// Answers one complete request; returns the redirect's URL when it is the one that ends the wait.
    private func answer(_ fd: Int32, requestLine line: String, _ expected: Expectation) -> URL? {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/"),
            let url = URL(string: "http://127.0.0.1:\(port)\(parts[1])")
        else {
            respond(fd, status: "400 Bad Request", body: "This is not a request this page answers.")
            return nil
        }
        guard parts[1].prefix(while: { $0 != "?" }) == expected.path else {
            respond(fd, status: "404 Not Found", body: "Not found.")
            return nil
        }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        // Constant time: the state is what keeps another local process from answering for the issuer.
        guard let state = items.first(where: { $0.name == "state" })?.value,
            ConstantTime.equal(Data(state.utf8), Data(expected.state.utf8))
        else {
            respond(
                fd,
                status: "400 Bad Request",
                body: "This answer does not belong to the login in progress; the login goes on waiting for its own."
            )
            return nil
        }
        if items.contains(where: { $0.name == "error" }) {
            respond(fd, status: "200 OK", body: "The login did not complete. Return to the app to see why.")
        } else {
            respond(
                fd,
                status: "200 OK",
                body: "The login is complete. You can close this window and return to the app."
            )
        }
        return url
    }

    private func respond(_ fd: Int32, status: String, body: String) {
        let html = "<!doctype html><meta charset=utf-8><title>CredentialVault</title><p>\(body)</p>\n"
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(html.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(html)"
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        // A few hundred bytes into a new connection's empty send buffer: one call sends it all.
        _ = Array(response.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
    }

    /// `duration` in whole milliseconds for `poll`, rounded up so a deadline is never polled short of.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
