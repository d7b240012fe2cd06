import Foundation
import VaultPOSIX

/// One TCP connection to a server on 127.0.0.1, written and read as bytes: for what an HTTP client library will
/// not do (pipelined requests, a body sent in two parts with a signal between them).
final class RawConnection: Sendable {
    /// One answer read off the connection: its status and headers (names lowercased).
    struct Answer: Sendable {
        let status: Int
        let headers: [String: String]
    }

    private let descriptor: Int32

    /// Connects to `127.0.0.1:port`; reads wait at most 30 s each.
    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let failure = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(descriptor)
            throw failure
        }
    }

    deinit { close(descriptor) }

    /// Writes all of `text` in one call (on loopback: one segment, read by the server at once).
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            sent += written
        }
    }

    /// Reads `count` answers with a Content-Length body each (fewer when the server closes or 30 s pass without a
    /// byte), on a thread of its own.
    func answers(_ count: Int) async -> [Answer] {
        let descriptor = descriptor
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: Self.collect(count, from: descriptor))
            }
        }
    }

    private static func collect(_ count: Int, from descriptor: Int32) -> [Answer] {
        var buffer: [UInt8] = []
        var answers: [Answer] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while answers.count < count {
            if let (answer, length) = parse(buffer) {
                answers.append(answer)
                buffer.removeFirst(length)
                continue
            }
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            buffer += chunk[0..<got]
        }
        return answers
    }

    /// The first whole answer in `bytes` and its length in bytes, nil while it is incomplete.
    private static func parse(_ bytes: [UInt8]) -> (Answer, Int)? {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first?.split(separator: " "), statusLine.count >= 2,
            let status = Int(statusLine[1])
        else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        let total = end + separator.count + (headers["content-length"].flatMap { Int($0) } ?? 0)
        return bytes.count >= total ? (Answer(status: status, headers: headers), total) : nil
    }
}
