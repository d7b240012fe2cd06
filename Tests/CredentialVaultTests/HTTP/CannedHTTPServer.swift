import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 that answers every request the same way, and misbehaves on demand:
/// a body larger than it says, or one that never ends. Plain sockets and a thread per connection, so a test
/// sees exactly what goes over the wire and when the client hangs up.
final class CannedHTTPServer: Sendable {
    /// What the server sends for a request.
    enum Answer: Sendable {
        /// A complete answer with a Content-Length.
        case fixed(status: Int, headers: [String: String] = [:], body: Data = Data())
        /// A status line and headers without a length, then body bytes until the client closes the connection
        /// (or `limit` bytes are sent).
        case endless(status: Int, limit: Int)
        /// These bytes as they are, then the connection closed: answers a client must refuse or take apart.
        case raw(Data)
        /// `prefix` at once, then `pattern` over and over, one byte every `interval` microseconds, until the client
        /// hangs up: a hostile server that keeps a request alive.
        case trickle(prefix: Data, pattern: Data, interval: UInt32)
        /// A connection's first request answered `status` with an empty body and the connection kept open; its
        /// second request read whole, then the connection closed without an answer: a kept connection that dies
        /// under a request, where a client must not send the request again.
        case keepAliveThenDrop(status: Int)
    }

    /// How an endless answer ended.
    struct StreamEnd: Sendable, Equatable {
        /// Body bytes the kernel accepted before the end.
        var bytesSent: Int
        /// Whether the client closed the connection (a failed write) before `limit` was reached.
        var clientHungUp: Bool
    }

    /// `http://127.0.0.1:{port}`.
    let baseURL: URL
    private let socket: Int32
    private let answer: Answer
    private let stopped = Mutex(false)
    private let streamEnds = Mutex<[StreamEnd]>([])
    private let requests = Mutex<[String]>([])

    /// Runs `body` with a server that answers every request with `answer`, and stops it on return.
    static func with<Result>(
        _ answer: Answer,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CannedHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = try CannedHTTPServer(answer: answer)
        defer { server.stop() }
        return try await body(server)
    }

    private init(answer: Answer) throws {
        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
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
        self.answer = answer
        baseURL = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        Thread { [self] in acceptLoop() }.start()
    }

    /// A vault whose issuer and key service are this server; nothing in it touches its store.
    func vault() throws -> Vault {
        let store = FileManager.default.temporaryDirectory.appending(path: "canned-\(UUID().uuidString)")
        let configuration = VaultConfiguration(
            issuer: baseURL,
            clientId: "vault",
            keyServiceURL: baseURL,
            storeDirectory: store,
            requestTimeout: 60
        )
        return try Vault(configuration: configuration)
    }

    /// The request targets seen so far, in order.
    var requestTargets: [String] { requests.withLock { $0 } }

    /// Waits (on a thread of its own, polling) until an endless answer has ended, and says how.
    func streamEnd() async -> StreamEnd? {
        await withCheckedContinuation { continuation in
            Thread { [self] in
                for _ in 0..<6_000 {
                    if let end = streamEnds.withLock({ $0.first }) {
                        continuation.resume(returning: end)
                        return
                    }
                    usleep(10_000)
                }
                continuation.resume(returning: nil)
            }
            .start()
        }
    }

    private func stop() {
        stopped.withLock { $0 = true }
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
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let target = readRequest(client) else { return }
        requests.withLock { $0.append(target) }
        switch answer {
        case .fixed(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Canned\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            _ = write(client, Data((head + "\r\n").utf8) + body)
        case .endless(let status, let limit):
            let head = "HTTP/1.1 \(status) Canned\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            guard write(client, Data(head.utf8)) else { return }
            let chunk = Data(repeating: UInt8(ascii: "x"), count: 65_536)
            var sent = 0
            var hungUp = false
            while sent < limit, !stopped.withLock({ $0 }) {
                guard write(client, chunk) else {
                    hungUp = true
                    break
                }
                sent += chunk.count
            }
            streamEnds.withLock { $0.append(StreamEnd(bytesSent: sent, clientHungUp: hungUp)) }
        case .raw(let bytes):
            _ = write(client, bytes)
        case .keepAliveThenDrop(let status):
            guard write(client, Data("HTTP/1.1 \(status) Canned\r\nContent-Length: 0\r\n\r\n".utf8)),
                let second = readRequest(client)
            else { return }
            requests.withLock { $0.append(second) }
        case .trickle(let prefix, let pattern, let interval):
            guard write(client, prefix), !pattern.isEmpty else { return }
            var index = pattern.startIndex
            while !stopped.withLock({ $0 }), write(client, Data([pattern[index]])) {
                index =
                    pattern.index(after: index) == pattern.endIndex ? pattern.startIndex : pattern.index(after: index)
                usleep(interval)
            }
        }
    }

    /// The request target; the headers and a Content-Length body are read and dropped.
    private func readRequest(_ client: Int32) -> String? {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        while headerEnd == nil, request.count < 65_536 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            request += buffer[0..<count]
            headerEnd = request.firstRange(of: [13, 10, 13, 10])?.upperBound
        }
        guard let headerEnd else { return nil }
        let head = String(decoding: request[..<headerEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let length =
            lines.dropFirst()
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var remaining = length - (request.count - headerEnd)
        while remaining > 0 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, min($0.count, remaining), 0) }
            guard count > 0 else { return nil }
            remaining -= count
        }
        let parts = lines.first?.split(separator: " ") ?? []
        return parts.count == 3 ? String(parts[1]) : nil
    }

    /// Whether all of `data` was written before the connection failed.
    private func write(_ client: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                #if canImport(Glibc)
                let flags = Int32(MSG_NOSIGNAL)
                #else
                let flags: Int32 = 0
                #endif
                let count = send(client, bytes.baseAddress! + offset, bytes.count - offset, flags)
                if count <= 0 { return false }
                offset += count
            }
            return true
        }
    }
}
