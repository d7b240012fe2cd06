package import Hummingbird
import Logging

/// Why a request was refused: answered with its status and a JSON body `{"error","error_description"}`.
///
/// A route handler throws it; Hummingbird's router turns it into ``response(from:context:)``
/// (`HTTPResponseError`). Any other error a route throws is answered by ``ServerErrorMiddleware``.
package struct RequestRefusal: HTTPResponseError {
    package let status: HTTPResponse.Status
    /// The `error` code: `invalid_request`, an OAuth code (RFC 6749 section 5.2), or a key-service one.
    package let error: String
    /// The `error_description`: what was wrong, never a value the client sent as a secret.
    package let description: String
    /// Headers the answer carries besides the JSON ones, such as `WWW-Authenticate`.
    package var headers: HTTPFields = [:]

    /// A refusal answered with `status` and the JSON body `{"error","error_description"}`.
    package init(status: HTTPResponse.Status, error: String, description: String, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.description = description
        self.headers = headers
    }

    /// A malformed request, answered 400.
    package static func invalidRequest(_ description: String) -> RequestRefusal {
        RequestRefusal(status: .badRequest, error: "invalid_request", description: description)
    }

    /// An OAuth error (RFC 6749 section 5.2), answered 400.
    package static func oauth(_ error: String, _ description: String) -> RequestRefusal {
        RequestRefusal(status: .badRequest, error: error, description: description)
    }

    /// A client that failed to authenticate (RFC 6749 section 5.2, `invalid_client`), answered 401.
    package static func clientAuthenticationFailed(_ description: String) -> RequestRefusal {
        RequestRefusal(status: .unauthorized, error: "invalid_client", description: description)
    }

    /// A grant that does not hold (RFC 6749 section 5.2), answered 400.
    package static func invalidGrant(_ description: String) -> RequestRefusal {
        .oauth("invalid_grant", description)
    }

    /// A failure inside the server, answered 500.
    package static let serverError = RequestRefusal(
        status: .internalServerError,
        error: "server_error",
        description: "internal error"
    )

    /// The answer: the status and the JSON error body.
    package var jsonResponse: Response {
        var response = Response.json(status: status, ["error": error, "error_description": description])
        response.headers.append(contentsOf: headers)
        return response
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        context.logger.debug(
            "request refused",
            metadata: ["status": "\(status.code)", "error": "\(error)", "error_description": "\(description)"]
        )
        return jsonResponse
    }
}
