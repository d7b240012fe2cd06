import Hummingbird
import KeyServiceCore
import Logging
import NIOCore

/// Applies the fault switched on for a request's scope before the request reaches any route.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = MockRequestContext

    let faults: FaultInjection
    private let keyServicePrefix: String
    private let keyServiceV2Prefix: String
    private let tokenPath: String
    private let revocationPath: String

    init(faults: FaultInjection, layout: Layout) {
        self.faults = faults
        keyServicePrefix = layout.path(Layout.keyService) + "/"
        keyServiceV2Prefix = layout.path(Layout.keyServiceV2) + "/"
        tokenPath = layout.path(Layout.token)
        revocationPath = layout.path(Layout.revocation)
    }

    func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let scope: FaultInjection.Scope? =
            if path.hasPrefix(keyServicePrefix) || path.hasPrefix(keyServiceV2Prefix) {
                .keyService
            } else if path == tokenPath {
                .tokenEndpoint
            } else if path == revocationPath {
                .revocationEndpoint
            } else {
                nil
            }
        guard let fault = faults.fault(for: scope) else {
            return try await next(request, context)
        }
        context.logger.debug("fault injected", metadata: ["fault": "\(fault)"])
        switch fault {
        case .delay(let duration):
            try await Task.sleep(for: duration)
            return try await next(request, context)
        case .dropConnection:
            // Closing before any byte of a response is written: the client sees no HTTP answer at all.
            try? await context.channel.close()
            throw CancellationError()
        case .internalServerError:
            return RequestRefusal(
                status: .internalServerError,
                error: "server_error",
                description: "fault injected: internal server error"
            ).jsonResponse
        case .undecodableBody:
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "<html>fault injected: not JSON</html>"))
            )
        case .bareStatus(let code):
            return Response(status: HTTPResponse.Status(code: code))
        case .stall(let duration):
            try? await Task.sleep(for: duration)
            try? await context.channel.close()
            throw CancellationError()
        case .oversizedBody(let bytes):
            let opening = #"{"padding":""#
            let padding = max(0, bytes - opening.utf8.count - 2)
            var buffer = ByteBuffer(string: opening)
            buffer.writeRepeatingByte(UInt8(ascii: "x"), count: padding)
            buffer.writeString(#""}"#)
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: buffer)
            )
        case .truncatedBody:
            let whole = ByteBuffer(string: #"{"fault":"injected: this answer is cut off half-way"}"#)
            let half = whole.getSlice(at: 0, length: whole.readableBytes / 2) ?? whole
            let channel = context.channel
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: whole.readableBytes) { writer in
                    try await writer.write(half)
                    // The half is flushed before the close, so the client sees headers and part of a body.
                    try await Task.sleep(for: .milliseconds(50))
                    try? await channel.close()
                    throw CancellationError()
                }
            )
        }
    }
}
