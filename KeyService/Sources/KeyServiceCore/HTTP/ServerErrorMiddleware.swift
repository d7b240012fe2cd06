package import Hummingbird
import Logging

/// Answers an error a route did not expect (a failing store, say) with the JSON 500
/// `{"error":"server_error","error_description":"internal error"}`, and logs it once, at `.error`.
///
/// Refusals never get here: the router has already turned them into their answers.
package struct ServerErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The middleware; it keeps no state.
    package init() {}

    package func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return RequestRefusal.serverError.jsonResponse
        }
    }
}
