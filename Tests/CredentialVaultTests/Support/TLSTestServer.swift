import Foundation
import Hummingbird
import HummingbirdTLS
import KeyServiceCore
import KeyServiceMock
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// An https server on a loopback address for the transport's TLS tests: `GET /hello` answers `hello`; `GET /big`
/// streams 200 MiB and counts the bytes it managed to hand to the connection, so a test sees how much the client
/// let through before it hung up.
final class TLSTestServer: Sendable {
    /// `https://HOST:PORT` (brackets around an IPv6 host).
    let baseURL: URL
    private let counter: Counter

    /// Runs `body` with a server on `host` serving `tls` (by default the test authority's certificate).
    static func with<Result: Sendable>(
        host: String = "127.0.0.1",
        tls: ServerTLS? = nil,
        run body: @Sendable (TLSTestServer) async throws -> Result
    ) async throws -> Result {
        let counter = Counter()
        let router = Router()
        router.get("hello") { _, _ in "hello" }
        router.get("big") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream"],
                body: ResponseBody { writer in
                    let chunk = ByteBuffer(repeating: UInt8(ascii: "b"), count: 64 * 1024)
                    for _ in 0..<(200 * 16) {
                        try await writer.write(chunk)
                        counter.add(chunk.readableBytes)
                    }
                    try await writer.finish(nil)
                }
            )
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            server: try .tls(tlsConfiguration: (try tls ?? TestTLS.server()).tlsConfiguration),
            configuration: .init(address: .hostname(host, port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: Logger(label: "tls-test-server", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [application],
                logger: Logger(label: "tls-test-server", factory: { _ in SwiftLogNoOpLogHandler() })
            )
        )
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var port = 0
        for await bound in ports { port = bound }
        let shown = host.contains(":") ? "[\(host)]" : host
        guard port > 0, let url = URL(string: "https://\(shown):\(port)") else {
            await group.triggerGracefulShutdown()
            throw FixtureError("the TLS test server did not listen")
        }
        let server = TLSTestServer(baseURL: url, counter: counter)
        do {
            let result = try await body(server)
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
    }

    private init(baseURL: URL, counter: Counter) {
        self.baseURL = baseURL
        self.counter = counter
    }

    /// Body bytes of `/big` handed to the connection.
    var bytesWritten: Int { counter.value }

    private final class Counter: Sendable {
        private let total = Mutex(0)
        func add(_ count: Int) { total.withLock { $0 += count } }
        var value: Int { total.withLock { $0 } }
    }
}
