import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
private let posixAccept = Glibc.accept
#elseif canImport(Darwin)
import Darwin
private let posixAccept = Darwin.accept
#endif

/// Receives one OAuth redirect on 127.0.0.1 at a port the system picks (RFC 8252 section 7.3), with
/// plain sockets so the library needs no server framework.
final class LoopbackRedirectReceiver: Sendable {
    /// The port the system gave.
    let port: UInt16
    private let socket: Int32
    private let closed = Mutex(false)

    /// Requests larger than this are refused; a redirect is a few hundred bytes.
    private static let maximumRequestSize = 16_384

    init() throws(VaultError) {
        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
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
        guard bound == 0, listen(fd, 8) == 0 else {
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
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        if !wasClosed { close(socket) }
    }

    /// Waits for a request to `path` and answers it with a page that says the login can continue in the
    /// terminal or app. Other paths (a browser's favicon request) get a 404 and the wait goes on.
    /// The wait runs on a thread of its own, never blocking Swift's cooperative pool.
    func waitForRedirect(path: String, timeout: Duration) async throws(VaultError) -> URL {
        let deadline = ContinuousClock.now + timeout
        let result: Result<URL, VaultError> = await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                continuation.resume(returning: self.accept(path: path, deadline: deadline))
            }
            thread.name = "credential-vault.loopback-redirect"
            thread.start()
        }
        return try result.get()
    }

    private func accept(path: String, deadline: ContinuousClock.Instant) -> Result<URL, VaultError> {
        while ContinuousClock.now < deadline {
            if closed.withLock({ $0 }) { return .failure(.openIDConnectFailed("the login was cancelled")) }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready <= 0 { continue }
            let client = posixAccept(socket, nil, nil)
            if client < 0 { continue }
            defer { close(client) }
            guard let target = readRequestTarget(client) else { continue }
            guard target.hasPrefix(path) && (target.count == path.count || target.dropFirst(path.count).first == "?")
            else {
                respond(client, status: "404 Not Found", body: "Not found.")
                continue
            }
            respond(
                client,
                status: "200 OK",
                body: "The login is complete. You can close this window and return to the app."
            )
            guard let url = URL(string: "http://127.0.0.1:\(port)\(target)") else {
                return .failure(.openIDConnectFailed("the redirect URL is malformed"))
            }
            return .success(url)
        }
        return .failure(.openIDConnectFailed("no redirect arrived within the time allowed"))
    }

    /// The request target of a `GET` request line, or nil.
    private func readRequestTarget(_ client: Int32) -> String? {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while request.count < Self.maximumRequestSize {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            request.append(contentsOf: buffer[0..<count])
            if request.count >= 4, request.suffix(4) == [13, 10, 13, 10] { break }
        }
        guard let lineEnd = request.firstIndex(of: 13) ?? request.firstIndex(of: 10) else { return nil }
        let parts = String(decoding: request[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/") else { return nil }
        return String(parts[1])
    }

    private func respond(_ client: Int32, status: String, body: String) {
        let html = "<!doctype html><meta charset=utf-8><title>CredentialVault</title><p>\(body)</p>\n"
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(html.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(html)"
        _ = Array(response.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
