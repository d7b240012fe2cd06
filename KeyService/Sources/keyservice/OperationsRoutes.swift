import Hummingbird
import KeyServiceCore
import Logging
import NIOCore
import Prometheus

/// What an operator's tools ask: `/healthz` (the process answers), `/readyz` (the storage answers) and `/metrics`
/// (Prometheus text format).
struct OperationsRoutes: Sendable {
    let storage: any KeyStorage
    let registry: PrometheusCollectorRegistry

    func add(to router: Router<KeyServiceRequestContext>) {
        router.get("/healthz") { _, _ in
            Self.text("ok\n")
        }
        router.get("/readyz") { _, context in
            do {
                try await storage.checkReady()
                return Self.text("ready\n")
            } catch {
                context.logger.warning("not ready: the storage does not answer", metadata: ["error": "\(error)"])
                return Self.text("the storage does not answer\n", status: .serviceUnavailable)
            }
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
            )
        }
    }

    private static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}
