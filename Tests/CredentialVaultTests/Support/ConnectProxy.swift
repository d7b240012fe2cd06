import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny logging HTTP CONNECT proxy on 127.0.0.1: it writes down every CONNECT target and Proxy-Authorization it
/// is sent, then tunnels the connection to 127.0.0.1 on the target's port, whatever the target's name (so a test
/// can ask for `issuer.vault-test.example`, which resolves nowhere, and still reach its local server).
final class ConnectProxy: Sendable {
    /// What one CONNECT asked for.
    struct Entry: Sendable, Equatable {
        /// `host:port` of the CONNECT line.
        let target: String
        /// The Proxy-Authorization header's value, if sent.
        let authorization: String?
    }

    /// The proxy's port on 127.0.0.1.
    let port: Int
    private let socket: Int32
    private let stopped = Mutex(false)
    private let entries = Mutex<[Entry]>([])
    private let relayed = Mutex(0)

    /// Bytes relayed from the servers to the clients so far: what a client read, give or take the socket buffers.
    var bytesToClients: Int { relayed.withLock { $0 } }

    /// The CONNECTs seen so far.
    var log: [Entry] { entries.withLock { $0 } }

    /// Runs `body` with a proxy, stopped on return.
    static func with<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ConnectProxy) async throws -> Result
    ) async throws -> Result {
        let proxy = try ConnectProxy()
        defer { proxy.stopped.withLock { $0 = true } }
        return try await body(proxy)
    }

    private init() throws {
        let fd = Self.tcpSocket()
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw FixtureError("cannot listen on 127.0.0.1")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    private static func tcpSocket() -> Int32 {
        #if canImport(Glibc)
        Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        defer { close(socket) }
        while !stopped.withLock({ $0 }) {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let client = accept(socket, nil, nil)
            guard client >= 0 else { continue }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var head = [UInt8]()
        var byte: UInt8 = 0
        while head.count < 16_384, !head.ends(with: [13, 10, 13, 10]) {
            guard recv(client, &byte, 1, 0) == 1 else { return }
            head.append(byte)
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[0] == "CONNECT" else { return }
        let target = String(parts[1])
        let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
            .map { $0.dropFirst("proxy-authorization:".count).trimmingCharacters(in: .whitespaces) }
        entries.withLock { $0.append(Entry(target: target, authorization: authorization)) }
        guard let portText = target.split(separator: ":").last, let port = UInt16(portText) else { return }
        let upstream = Self.tcpSocket()
        guard upstream >= 0 else { return }
        defer { close(upstream) }
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return }
        let established = Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)
        guard send(client, established, established.count, Self.noSignal) == established.count else { return }
        let finished = Finished()
        Thread { [self] in
            pump(from: upstream, to: client, counted: true)
            finished.mark()
        }
        .start()
        pump(from: client, to: upstream)
        // The other direction ends once the sockets are shut down; wait for it before they close.
        while !finished.isSet { usleep(1_000) }
    }

    private final class Finished: Sendable {
        private let flag = Mutex(false)
        func mark() { flag.withLock { $0 = true } }
        var isSet: Bool { flag.withLock { $0 } }
    }

    private static var noSignal: Int32 {
        #if canImport(Glibc)
        Int32(MSG_NOSIGNAL)
        #else
        0
        #endif
    }

    /// Copies bytes until either side closes, then shuts both down so the other direction ends too.
    private func pump(from source: Int32, to sink: Int32, counted: Bool = false) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !stopped.withLock({ $0 }) {
            var poller = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready == 0 { continue }
            let count = ready > 0 ? recv(source, &buffer, buffer.count, 0) : -1
            guard count > 0, send(sink, buffer, count, Self.noSignal) == count else { break }
            if counted { relayed.withLock { $0 += count } }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(sink, Int32(SHUT_RDWR))
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
