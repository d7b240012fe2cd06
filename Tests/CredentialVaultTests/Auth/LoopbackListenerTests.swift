import CredentialVault
import Foundation
import KeyServiceMock
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc

private let closeDescriptor = Glibc.close
private let sendBytes = Glibc.send
private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
import Darwin

private let closeDescriptor = Darwin.close
private let sendBytes = Darwin.send
private let noSignal: Int32 = 0
#endif

/// Any local process can connect to the loopback redirect listener: none but the issuer's redirect with this
/// login's state ends the login, and none can hold the listener up.
@Suite("Loopback redirect listener")
struct LoopbackListenerTests {
    @Test("requests without this login's state are answered 400, other paths 404, and the login goes on")
    func strangersAnswered() async throws {
        try await AuthFixture.with { fixture in
            let statuses = Mutex<[Int?]>([])
            let userId = try await fixture.vault.auth.performOpenIDConnectFlow(timeout: .seconds(120)) { url in
                let login = LoginURL(url)
                for target in [
                    login.redirect(query: "code=stolen&state=forged"),
                    login.redirect(query: "code=stolen"),
                    login.redirect(query: "error=access_denied&state=forged"),
                    login.redirect(query: "state=\(login.state.dropLast())"),
                    login.redirect(path: "/favicon.ico", query: "state=\(login.state)"),
                ] {
                    let response = try? await TestTLS.transport().send(
                        HTTPRequest(method: "GET", url: target, timeout: 60)
                    )
                    statuses.withLock { $0.append(response?.status) }
                }
                await Browser.follow(url)
            }
            #expect(statuses.withLock { $0 } == [400, 400, 400, 400, 404])
            #expect(await fixture.vault.auth.currentUserId == userId)
        }
    }

    @Test("connections that send half a request line and go on dripping do not keep the redirect from being served")
    func stalledConnections() async throws {
        try await AuthFixture.with { fixture in
            let drip = Mutex<Task<(connections: Int, cutShort: Bool), Never>?>(nil)
            let opened = Count()
            let userId = try await fixture.vault.auth.performOpenIDConnectFlow(timeout: .seconds(120)) { url in
                let port = LoginURL(url).port
                // A byte now and then, until the login is over: a listener that reads one connection at a time,
                // each read bounded by a timeout, would never get to the browser's. The bound on rounds only
                // ends the drip for such a listener, so that the test ends and says so.
                let dripping = Task {
                    var stalled: [RawConnection] = []
                    for _ in 0..<5 {
                        guard let connection = try? await RawConnection.open(port: port) else { continue }
                        _ = await connection.send("GET /callb")
                        stalled.append(connection)
                        opened.add()
                    }
                    for _ in 0..<300 where !Task.isCancelled {
                        for connection in stalled { _ = await connection.send("a") }
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                    for connection in stalled { connection.close() }
                    return (connections: stalled.count, cutShort: Task.isCancelled)
                }
                drip.withLock { $0 = dripping }
                // The stalled connections reach the listener before the browser's.
                for _ in 0..<6_000 where opened.value < 5 { try? await Task.sleep(for: .milliseconds(10)) }
                await Browser.follow(url)
            }
            let dripping = try #require(drip.withLock { $0 })
            dripping.cancel()
            let outcome = await dripping.value
            #expect(outcome.connections == 5)
            #expect(outcome.cutShort, "the login ended only after the stalled connections stopped dripping")
            #expect(await fixture.vault.auth.currentUserId == userId)
        }
    }

    @Test("a client that drips its request a byte at a time is dropped at its deadline, and the login goes on")
    func drippingClientDropped() async throws {
        try await AuthFixture.with { fixture in
            let dropped = Mutex<Bool?>(nil)
            let userId = try await fixture.vault.auth.performOpenIDConnectFlow(timeout: .seconds(120)) { url in
                let login = LoginURL(url)
                guard let connection = try? await RawConnection.open(port: login.port) else { return }
                defer { connection.close() }
                // Longer than any deadline at this pace: only the listener hanging up ends the drip early.
                let request = "GET /callback?state=\(login.state)&code=" + String(repeating: "x", count: 1_000)
                dropped.withLock { $0 = false }
                for byte in request.utf8 {
                    if await connection.closedByPeer(within: .milliseconds(50)) {
                        dropped.withLock { $0 = true }
                        break
                    }
                    guard await connection.send(String(decoding: [byte], as: UTF8.self)) else {
                        dropped.withLock { $0 = true }
                        break
                    }
                }
                await Browser.follow(url)
            }
            #expect(dropped.withLock { $0 } == true)
            #expect(await fixture.vault.auth.currentUserId == userId)
        }
    }

    @Test("an error redirect with this login's state ends the login: it is the issuer's answer")
    func errorRedirectEnds() async throws {
        try await AuthFixture.with { fixture in
            let status = Mutex<Int?>(nil)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performOpenIDConnectFlow(timeout: .seconds(120)) { url in
                    let login = LoginURL(url)
                    // As the issuer sends it: with its iss (RFC 9207), which its discovery says it always sends.
                    let iss = fixture.server.issuer.absoluteString.addingPercentEncoding(
                        withAllowedCharacters: .alphanumerics
                    )
                    let target = login.redirect(query: "error=access_denied&state=\(login.state)&iss=\(iss ?? "")")
                    // The flow ends (and cancels this presenter) as the page is sent: the browser reads on regardless.
                    let response = try? await Task {
                        try await TestTLS.transport().send(HTTPRequest(method: "GET", url: target, timeout: 60))
                    }
                    .value
                    status.withLock { $0 = response?.status ?? 0 }
                }
            }
            // The login ends as the page is sent, maybe before the browser has read it: wait for the browser,
            // not for a clock (the bound only keeps a broken listener from hanging the run).
            for _ in 0..<6_000 where status.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(status.withLock { $0 } == 200)
            #expect(error?.kind == .openIDConnectFailed)
            #expect(error?.description.contains("access_denied") == true)
        }
    }
}

/// A count several tasks add to.
final class Count: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}

/// What a test needs from an authorization URL: the listener's redirect URI and the login's state.
struct LoginURL {
    let redirectURI: String
    let state: String

    init(_ url: URL) {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        redirectURI = items.first { $0.name == "redirect_uri" }?.value ?? ""
        state = items.first { $0.name == "state" }?.value ?? ""
    }

    var port: UInt16 { URL(string: redirectURI)?.port.flatMap(UInt16.init(exactly:)) ?? 0 }

    /// The redirect URI (or another `path` on its listener) with `query`.
    func redirect(path: String? = nil, query: String) -> URL {
        var components = URLComponents(string: redirectURI)!
        if let path { components.path = path }
        components.percentEncodedQuery = query
        return components.url!
    }
}

/// A raw TCP connection to 127.0.0.1, for clients that misbehave. Every blocking call runs on a thread of
/// its own, never on the cooperative pool.
final class RawConnection: Sendable {
    private let fd: Int32
    private let closed = Mutex(false)

    private init(fd: Int32) {
        self.fd = fd
    }

    static func open(port: UInt16) async throws -> RawConnection {
        let fd = try await onOwnThread { () throws -> Int32 in
            #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard fd >= 0 else { throw FixtureError("socket failed") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                _ = closeDescriptor(fd)
                throw FixtureError("connect failed")
            }
            return fd
        }
        return RawConnection(fd: fd)
    }

    /// Whether all of `text` was sent.
    func send(_ text: String) async -> Bool {
        let fd = fd
        let sent = try? await onOwnThread {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { sendBytes(fd, $0.baseAddress, $0.count, noSignal) } == bytes.count
        }
        return sent ?? false
    }

    /// Whether the other side closed the connection, waiting at most `wait` for it.
    func closedByPeer(within wait: Duration) async -> Bool {
        let fd = fd
        let milliseconds = Int32(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
        let closed = try? await onOwnThread {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) > 0 else { return false }
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_PEEK)) <= 0
        }
        return closed ?? false
    }

    func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { _ = closeDescriptor(fd) }
    }

    deinit {
        close()
    }
}
