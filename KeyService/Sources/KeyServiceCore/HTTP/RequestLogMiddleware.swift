package import Hummingbird
import Logging

/// Logs every request at `.debug`: its method and path.
///
/// Never the query, which may carry a token (logout's `id_token_hint`), nor any header or body.
package struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The middleware; it keeps no state.
    package init() {}

    package func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        context.logger.debug("request", metadata: ["method": "\(request.method)", "path": "\(request.uri.path)"])
        return try await next(request, context)
    }
}
