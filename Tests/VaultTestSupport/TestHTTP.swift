import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// HTTP for the suites that talk to a server as any other process would (the key services' and the mock's own
/// suites): AsyncHTTPClient, the vault's transport on Linux, one client for the whole test process.
///
/// Not URLSession: cancelling swift-corelibs-foundation's tasks from a task group can deadlock (the cancel waits for
/// the session's queue, which waits to resume the cancelling task), its request timeout is a pause between bytes, not
/// a deadline, and the suites had to hop to a dispatch thread around each call. Here every request has its answer's
/// head by its deadline or fails, its body stops at a pause longer than ``readTimeout``, and it is cancelled with its
/// task.
public enum TestHTTP {
    /// One HTTP answer, read in full.
    public struct Answer: Sendable {
        /// The status code.
        public let status: Int
        /// The header fields, in the order received.
        public let headers: [(name: String, value: String)]
        /// The body.
        public let body: Data
    }

    /// No HTTP answer came: the connection failed, closed early, the answer was cut or the deadline passed.
    public struct NoAnswer: Error, CustomStringConvertible {
        /// What the transport said.
        public let description: String
    }

    /// The largest body read; a larger one is `NoAnswer`.
    public static let bodyLimit = 64 << 20

    /// Sends `request` (its method, URL, header fields and body) and reads the whole answer: its head within
    /// ``readTimeout``, its body with no pause longer. Redirects are not followed: a 302 is an answer.
    /// - Throws: ``NoAnswer`` when no complete HTTP answer came.
    public static func send(_ request: URLRequest) async throws(NoAnswer) -> Answer {
        guard let url = request.url else { throw NoAnswer(description: "the request has no URL") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let deadline = NIODeadline.now() + .seconds(Int64(readTimeout))
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            let body = try await response.body.collect(upTo: bodyLimit)
            return Answer(
                status: Int(response.status.code),
                headers: response.headers.map { (name: $0.name, value: $0.value) },
                body: Data(body.readableBytesView)
            )
        } catch {
            throw NoAnswer(description: "\(error)")
        }
    }

    /// The longest pause in an answer, its head or its body, before the request fails: the longest deadline the suites
    /// give.
    public static let readTimeout: TimeInterval = 120

    /// The process's client: never shut down (a static lives as long as the process), connections kept and reused,
    /// up to 256 to one host at once: the hammers' thousand requests queue for them, and the process (the mock serves
    /// in it) stays far below a 1,024-descriptor limit.
    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(30), read: .seconds(Int64(readTimeout))),
            connectionPool: HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: 256
            )
        )
    )
}
