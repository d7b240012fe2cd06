import Foundation
import Synchronization
import VaultPOSIX

/// Receives one OAuth redirect on the loopback interface (RFC 8252 section 7.3), with plain sockets so the
/// library needs no server framework: at a port the system picks, or at the configured one for issuers that
/// match redirect URIs exactly. `localhost` listens on 127.0.0.1 and, where it can, on ::1 at the same port.
///
/// Any process on the machine can connect to the port, so no request it sends ends the login but the one
/// to the redirect path that carries this login's `state`. Connections are served side by side on one
/// thread with `poll`, each with a short deadline of its own for sending its request: a client that
/// connects and stalls, or drips bytes, is dropped at its deadline and delays no other.
final class LoopbackRedirectReceiver: Sendable {
    /// The port listened on: the one asked for, or the one the system gave.
    let port: UInt16
    /// The listening sockets: one, or two for `localhost`.
    private let sockets: [Int32]
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

    /// A listener on `host` (a 127.0.0.0/8 or ::1 literal, or `localhost`) at `port` (0: one the system picks);
    /// `connectionTimeout` bounds how long each connection may take to send its request.
    /// - Throws: ``VaultError`` `.openIDConnectFailed` naming the address when it cannot listen there (a port
    ///   another program holds, an address this machine lacks).
    init(host: String = "127.0.0.1", port: UInt16 = 0, connectionTimeout: Duration = .seconds(5)) throws(VaultError) {
        let literal = host.lowercased() == "localhost" ? "127.0.0.1" : host
        let shown = literal.contains(":") ? "[\(literal)]:\(port)" : "\(literal):\(port)"
        guard let first = Self.listening(on: literal, port: port) else {
            throw .openIDConnectFailed(
                "cannot listen for the redirect on \(shown)\(port == 0 ? "" : " (is another program using that port?)")"
            )
        }
        var sockets = [first.socket]
        if host.lowercased() == "localhost" {
            // A browser may resolve localhost to ::1 first: listen there too, at the same port. Where another
            // program holds that port on ::1, it would receive the code: refuse. Only a machine without IPv6
            // loopback goes on with 127.0.0.1 alone.
            if let second = Self.listening(on: "::1", port: first.port) {
                sockets.append(second.socket)
            } else if errno != EADDRNOTAVAIL && errno != EAFNOSUPPORT {
                close(first.socket)
                throw .openIDConnectFailed(
                    "cannot listen for the redirect on [::1]:\(first.port) as well as 127.0.0.1 (is another program "
                        + "using that port?); localhost may reach either"
                )
            }
        }
        self.sockets = sockets
        self.port = first.port
        self.connectionTimeout = connectionTimeout
    }

    /// A non-blocking listening socket on the IP literal `address` at `port`, and the port it got; nil when it
    /// cannot listen there.
    private static func listening(on address: String, port: UInt16) -> (socket: Int32, port: UInt16)? {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        let family: Int32
        if inet_pton(AF_INET, address, &ipv4) == 1 {
            family = AF_INET
        } else if inet_pton(AF_INET6, address, &ipv6) == 1 {
            family = AF_INET6
        } else {
            return nil
        }
        let fd = StreamSocket.open(family: family, nonBlocking: true)
        guard fd >= 0 else { return nil }
        // A fixed port is free again at once after the last login's listener closed, connections in TIME_WAIT
        // or not; on Linux this never lets two sockets listen on one port.
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        var actualPort: UInt16 = 0
        if family == AF_INET {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr = ipv4
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            var actual = sockaddr_in()
            var actualLength = length
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
            }
            actualPort = UInt16(bigEndian: actual.sin_port)
        } else {
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            socketAddress.sin6_addr = ipv6
            let length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            var actual = sockaddr_in6()
            var actualLength = length
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
            }
            actualPort = UInt16(bigEndian: actual.sin6_port)
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let failure = errno  // why, for the caller: close must not overwrite it
            close(fd)
            errno = failure
            return nil
        }
        return (fd, actualPort)
    }

    deinit {
        stop()
    }

    /// The redirect URI to send for `configured`: exactly as configured when it names a port, else the same
    /// host and path at the port listened on (`/` for an empty path).
    func redirectURI(for configured: URL) -> URL {
        if let port = configured.port, port != 0 { return configured }
        var components = URLComponents(url: configured, resolvingAgainstBaseURL: false)
        components?.port = Int(port)
        if components?.path.isEmpty == true { components?.path = "/" }
        return components?.url ?? configured
    }

    /// Stops listening; a pending wait ends with an error.
    func stop() {
        let closeNow = lifecycle.withLock { lifecycle in
            lifecycle.stopped = true
            guard !lifecycle.waiting, !lifecycle.socketClosed else { return false }
            lifecycle.socketClosed = true
            return true
        }
        if closeNow { for socket in sockets { close(socket) } }
    }

    /// Waits for a request to `path` whose `state` query parameter is `state`, answers it with a page that
    /// says the login can continue in the terminal or app, and returns its URL (an error redirect included:
    /// it is the issuer's answer to this login).
    ///
    /// Every other request is answered and the wait goes on: another path (a browser's favicon request) gets
    /// a 404, the redirect path without this login's `state` a 400. The wait runs on a thread of its own,
    /// never blocking Swift's cooperative pool.
    /// - Returns: the redirect's URL, or nil when `timeout` passed first.
    /// - Throws: `.openIDConnectFailed` when ``stop()`` is called.
    func waitForRedirect(path: String, state: String, timeout: Duration) async throws(VaultError) -> URL? {
        let deadline = ContinuousClock.now + timeout
        let begun = lifecycle.withLock { lifecycle in
            guard !lifecycle.stopped, !lifecycle.waiting else { return false }
            lifecycle.waiting = true
            return true
        }
        guard begun else { throw .openIDConnectFailed("the login was cancelled") }
        let expected = Expectation(path: path, state: state)
        return try await BlockingThread.run("vault-redirect") { [self] () throws(VaultError) in
            defer { endWaiting() }
            return try serve(expected, until: deadline).get()
        }
    }

    private func endWaiting() {
        let closeNow = lifecycle.withLock { lifecycle in
            lifecycle.waiting = false
            guard lifecycle.stopped, !lifecycle.socketClosed else { return false }
            lifecycle.socketClosed = true
            return true
        }
        if closeNow { for socket in sockets { close(socket) } }
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

    private func serve(_ expected: Expectation, until deadline: ContinuousClock.Instant) -> Result<URL?, VaultError> {
        var connections: [Connection] = []
        defer { for connection in connections { close(connection.fd) } }
        while true {
            if lifecycle.withLock({ $0.stopped }) { return .failure(.openIDConnectFailed("the login was cancelled")) }
            let now = ContinuousClock.now
            guard now < deadline else { return .success(nil) }
            // A connection past its deadline is dropped unanswered: it had its time.
            connections.removeAll { connection in
                guard connection.deadline <= now else { return false }
                close(connection.fd)
                return true
            }
            var pollers = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            pollers += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let wake = connections.map(\.deadline).reduce(deadline, min)
            guard poll(&pollers, nfds_t(pollers.count), Poll.milliseconds(min(Self.tick, wake - now))) > 0 else {
                continue
            }
            // From the last, so removing one leaves the indices of those still to visit unchanged.
            for index in connections.indices.reversed() where pollers[index + sockets.count].revents != 0 {
                let progress = read(&connections[index])
                if case .incomplete = progress { continue }
                let fd = connections.remove(at: index).fd
                defer { close(fd) }
                if case .complete(let line) = progress, let url = answer(fd, requestLine: line, expected) {
                    return .success(url)
                }
            }
            for (index, socket) in sockets.enumerated() where pollers[index].revents != 0 {
                acceptWaiting(on: socket, into: &connections)
            }
        }
    }

    /// Accepts every connection waiting on `socket`, each with a deadline from now.
    private func acceptWaiting(on socket: Int32, into connections: inout [Connection]) {
        for _ in 0..<Self.maximumConnections {
            guard let fd = StreamSocket.openConnection(acceptedOn: socket) else { return }
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
            switch LoopbackRedirectRequest.head(of: connection.received, maximumSize: Self.maximumRequestSize) {
            case .incomplete: continue
            case .tooLarge: return .dropped
            case .complete(let line): return .complete(line)
            }
        }
    }

    /// Answers one complete request; returns the redirect's URL when it is the one that ends the wait.
    private func answer(_ fd: Int32, requestLine line: String, _ expected: Expectation) -> URL? {
        let verdict = LoopbackRedirectRequest.verdict(
            requestLine: line,
            path: expected.path,
            state: expected.state,
            port: port
        )
        switch verdict {
        case .notARequest:
            respond(fd, status: "400 Bad Request", body: "This is not a request this page answers.")
            return nil
        case .notFound:
            respond(fd, status: "404 Not Found", body: "Not found.")
            return nil
        case .otherLogin:
            respond(
                fd,
                status: "400 Bad Request",
                body: "This answer does not belong to the login in progress; the login goes on waiting for its own."
            )
            return nil
        case .redirect(let url, isError: true):
            respond(fd, status: "200 OK", body: "The login did not complete. Return to the app to see why.")
            return url
        case .redirect(let url, isError: false):
            respond(
                fd,
                status: "200 OK",
                body: "The login is complete. You can close this window and return to the app."
            )
            return url
        }
    }

    private func respond(_ fd: Int32, status: String, body: String) {
        let html = "<!doctype html><meta charset=utf-8><title>CredentialVault</title><p>\(body)</p>\n"
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(html.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(html)"
        // A few hundred bytes into a new connection's empty send buffer: one call sends it all.
        _ = Array(response.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, StreamSocket.noSignal) }
    }
}
