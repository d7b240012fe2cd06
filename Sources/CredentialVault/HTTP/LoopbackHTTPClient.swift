#if canImport(Glibc)
import Foundation
import Glibc

/// Plain HTTP/1.1 to a loopback address, over a socket of its own: one request per connection
/// (`Connection: close`), blocking calls on a thread of its own, every wait bounded by the request's deadline.
///
/// ``URLSessionTransport`` sends loopback `http` requests here instead of through FoundationNetworking, whose
/// socket-event plumbing on Linux can miss the event a request waits for: under load a request then hangs with its
/// body half sent until the timeout (seen with gdb: no thread busy, the transfer waiting for an event that never
/// came). Loopback `http` is what local servers, tests and the key service on this machine speak; `https` still goes
/// through URLSession. Answers are read only up to the request's ``HTTPRequest/maximumAnswerSize``. Linux only: Apple
/// platforms keep URLSession, which does not share the fault.
enum LoopbackHTTPClient {
    /// The most header bytes read before the body.
    static let maximumHeaderSize = 64 * 1024

    /// Sends `request` on a new thread and returns its answer.
    static func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>) in
            let thread = Thread {
                do throws(TransportError) {
                    continuation.resume(returning: .success(try exchange(request)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.name = "credential-vault-http"
            thread.start()
        }
        return try result.get()
    }

    /// The whole exchange, blocking: connect, write the request, read the answer to the end of the connection.
    static func exchange(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let host = request.url.displayHost
        let deadline = Date().addingTimeInterval(request.timeout)
        func failure(_ kind: TransportError.Kind, _ reason: String) -> TransportError {
            TransportError(kind: kind, host: host, reason: reason)
        }
        guard var literal = request.url.host, Loopback.isAddress(literal) else {
            throw failure(.notConnected, "not a loopback address")
        }
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        let port = request.url.port ?? 80
        guard (1...65535).contains(port) else { throw failure(.notConnected, "the port is not usable") }

        let message = try requestBytes(request, literal: literal, port: port)
        let socket = try connect(literal, port: UInt16(port), deadline: deadline, failure: failure)
        defer { close(socket) }
        try write(message, to: socket, deadline: deadline, failure: failure)
        let answer = try readAnswer(
            from: socket,
            limit: request.maximumAnswerSize,
            deadline: deadline,
            timeout: request.timeout,
            failure: failure
        )
        return try parse(answer, limit: request.maximumAnswerSize, failure: failure)
    }

    // MARK: Request

    private static func requestBytes(
        _ request: HTTPRequest,
        literal: String,
        port: Int
    ) throws(TransportError) -> [UInt8] {
        var target = request.url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = request.url.query(percentEncoded: true) { target += "?" + query }
        let hostHeader = (literal.contains(":") ? "[\(literal)]" : literal) + ":\(port)"
        var lines = ["\(request.method) \(target) HTTP/1.1", "Host: \(hostHeader)", "Connection: close"]
        let body = request.body ?? Data()
        if request.body != nil || ["POST", "PUT", "PATCH"].contains(request.method) {
            lines.append("Content-Length: \(body.count)")
        }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            let lowered = name.lowercased()
            guard !["host", "connection", "content-length", "transfer-encoding"].contains(lowered) else { continue }
            // A header that could start another header or line is never sent.
            // (Scalars, not Characters: "\r\n" is one Character.)
            let breaksLine = "\(name)\(value)".unicodeScalars.contains { $0 == "\r" || $0 == "\n" }
            guard !breaksLine, !name.contains(":") else {
                throw TransportError(kind: .notConnected, host: literal, reason: "a request header is not valid")
            }
            lines.append("\(name): \(value)")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + Array(body)
    }

    // MARK: Socket

    private static func connect(
        _ literal: String,
        port: UInt16,
        deadline: Date,
        failure: (TransportError.Kind, String) -> TransportError
    ) throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(literal, String(port), &hints, &list) == 0, let address = list else {
            throw failure(.notConnected, "the address cannot be used")
        }
        defer { freeaddrinfo(list) }
        let socket = Glibc.socket(
            address.pointee.ai_family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard socket >= 0 else { throw failure(.notConnected, "no socket could be made") }
        // Non-blocking, so every wait below is a poll with the time that is left.
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                let reason = errno == ECONNREFUSED ? "connection refused" : "the connection failed"
                close(socket)
                throw failure(.notConnected, reason)
            }
            guard wait(socket, for: Int16(POLLOUT), deadline: deadline) else {
                close(socket)
                throw failure(.notConnected, "no connection within the time allowed")
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                close(socket)
                throw failure(.notConnected, error == ECONNREFUSED ? "connection refused" : "the connection failed")
            }
        }
        return socket
    }

    private static func write(
        _ bytes: [UInt8],
        to socket: Int32,
        deadline: Date,
        failure: (TransportError.Kind, String) -> TransportError
    ) throws(TransportError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                guard wait(socket, for: Int16(POLLOUT), deadline: deadline) else {
                    throw failure(.timedOut, "no answer within the time allowed")
                }
            } else {
                throw failure(.noResponse, "the connection was dropped")
            }
        }
    }

    private static func readAnswer(
        from socket: Int32,
        limit: Int,
        deadline: Date,
        timeout: TimeInterval,
        failure: (TransportError.Kind, String) -> TransportError
    ) throws(TransportError) -> [UInt8] {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        // Headers, a chunked body's framing, and the body up to the limit; more is refused.
        let ceiling = limit + maximumHeaderSize + limit / 8 + 1024
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                answer.append(contentsOf: buffer[0..<count])
                if answer.count > ceiling {
                    throw failure(.answerTooLarge, tooLarge(limit))
                }
                // A server that keeps the connection open after a whole answer of known length is not waited for.
                if isComplete(answer) { return answer }
                if answer.count > maximumHeaderSize, headerEnd(answer[...]) == nil {
                    throw failure(.noResponse, "the answer's headers are longer than \(maximumHeaderSize) bytes")
                }
            } else if count == 0 {
                return answer
            } else if errno == EAGAIN || errno == EINTR {
                guard wait(socket, for: Int16(POLLIN), deadline: deadline) else {
                    throw failure(.timedOut, "no answer within \(URLSessionTransport.seconds(timeout))")
                }
            } else {
                throw failure(.noResponse, "the connection was dropped")
            }
        }
    }

    private static func tooLarge(_ limit: Int) -> String {
        "the answer is larger than \(URLSessionTransport.bytes(limit)), the most accepted"
    }

    /// Whether `bytes` hold a final answer whose body, of a stated `Content-Length`, has fully arrived.
    private static func isComplete(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        while let end = headerEnd(rest) {
            let head = String(decoding: rest[rest.startIndex..<end], as: UTF8.self).lowercased()
            rest = rest[(end + 4)...]
            if head.hasPrefix("http/1.1 1") || head.hasPrefix("http/1.0 1") { continue }
            guard !head.contains("transfer-encoding"),
                let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return false }
            return rest.count >= length
        }
        return false
    }

    /// Waits until `socket` is ready for `events`, or the deadline passes (false).
    private static func wait(_ socket: Int32, for events: Int16, deadline: Date) -> Bool {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }

    // MARK: Answer

    /// The status, headers (names lower-cased) and body of a whole HTTP/1.1 answer; a `100 Continue` before it is
    /// skipped.
    static func parse(
        _ bytes: [UInt8],
        limit: Int,
        failure: (TransportError.Kind, String) -> TransportError
    ) throws(TransportError) -> HTTPResponse {
        var rest = bytes[...]
        while true {
            guard let end = headerEnd(rest) else {
                throw failure(.noResponse, "the connection closed without a valid HTTP answer")
            }
            let head = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
            rest = rest[(end + 4)...]
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
                (100...599).contains(status)
            else { throw failure(.noResponse, "the connection closed without a valid HTTP answer") }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
            if (100..<200).contains(status) { continue }
            let body: [UInt8]
            if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                body = try dechunk(rest, failure: failure)
            } else if let text = headers["content-length"] {
                // Two different lengths (joined above as "a, b") frame nothing: refused (RFC 9112 section 6.3).
                guard let length = Int(text), length >= 0 else {
                    throw failure(.noResponse, "the answer's Content-Length is not valid")
                }
                guard rest.count >= length else { throw failure(.noResponse, "the connection was dropped mid-answer") }
                body = Array(rest.prefix(length))
            } else {
                body = Array(rest)
            }
            guard body.count <= limit else {
                throw failure(.answerTooLarge, tooLarge(limit))
            }
            return HTTPResponse(status: status, headers: headers, body: Data(body))
        }
    }

    private static func headerEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = bytes.startIndex
        while index + 3 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func dechunk(
        _ bytes: ArraySlice<UInt8>,
        failure: (TransportError.Kind, String) -> TransportError
    ) throws(TransportError) -> [UInt8] {
        var rest = bytes
        var body: [UInt8] = []
        while true {
            guard let lineEnd = rest.firstIndex(of: 13), lineEnd + 1 < rest.endIndex, rest[lineEnd + 1] == 10 else {
                throw failure(.noResponse, "the connection was dropped mid-answer")
            }
            let sizeText =
                String(decoding: rest[rest.startIndex..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
            rest = rest[(lineEnd + 2)...]
            guard let size = Int(sizeText, radix: 16), size >= 0, size <= rest.count else {
                throw failure(.noResponse, "the answer's chunked body is not valid or was cut")
            }
            if size == 0 { return body }
            guard rest.count >= size + 2 else { throw failure(.noResponse, "the connection was dropped mid-answer") }
            body.append(contentsOf: rest.prefix(size))
            rest = rest[(rest.startIndex + size + 2)...]
        }
    }
}
#endif
