import Hummingbird
import NIOCore

/// Applies the fault switched on for a request's scope before the request reaches any route.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = MockRequestContext

    let faults: FaultInjection
    let keyServicePath: String
    let tokenPath: String

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let scope: FaultInjection.Scope? =
            path.hasPrefix(keyServicePath) ? .keyService : (path == tokenPath ? .tokenEndpoint : nil)
        switch faults.fault(for: scope) {
        case nil:
            return try await next(request, context)
        case .delay(let duration):
            try await Task.sleep(for: duration)
            return try await next(request, context)
        case .dropConnection:
            // Closing before any byte of a response is written: the client sees no HTTP answer at all.
            try? await context.channel.close()
            throw CancellationError()
        case .internalServerError:
            return .json(
                status: .internalServerError,
                ["error": "server_error", "error_description": "fault injected: internal server error"]
            )
        case .undecodableBody:
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "<html>fault injected: not JSON</html>"))
            )
        }
    }
}
