import Hummingbird
import Logging

/// Why the FHIR endpoint refused a request: answered with its status and an OperationOutcome.
///
/// A 401 also carries `WWW-Authenticate: Bearer realm="fhir", error="invalid_token"` (RFC 6750 section 3).
struct FHIRRefusal: HTTPResponseError {
    let status: HTTPResponse.Status
    /// The OperationOutcome issue code (FHIR R4 `IssueType`): `login`, `forbidden`, `not-found`, `invalid`.
    let code: String
    /// What was wrong, never a token.
    let diagnostics: String

    /// No access token, or one that is unknown, expired or revoked: 401.
    static func invalidToken(_ diagnostics: String) -> FHIRRefusal {
        FHIRRefusal(status: .unauthorized, code: "login", diagnostics: diagnostics)
    }

    /// An access token whose scope does not cover the request: 403.
    static func forbidden(_ diagnostics: String) -> FHIRRefusal {
        FHIRRefusal(status: .forbidden, code: "forbidden", diagnostics: diagnostics)
    }

    /// No such resource: 404.
    static func notFound(_ diagnostics: String) -> FHIRRefusal {
        FHIRRefusal(status: .notFound, code: "not-found", diagnostics: diagnostics)
    }

    /// A malformed search: 400.
    static func invalid(_ diagnostics: String) -> FHIRRefusal {
        FHIRRefusal(status: .badRequest, code: "invalid", diagnostics: diagnostics)
    }

    /// The OperationOutcome resource.
    var outcome: JSONValue {
        [
            "resourceType": "OperationOutcome",
            "issue": [["severity": "error", "code": .string(code), "diagnostics": .string(diagnostics)]],
        ]
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        context.logger.debug(
            "FHIR request refused",
            metadata: ["status": "\(status.code)", "code": "\(code)", "diagnostics": "\(diagnostics)"]
        )
        var response = Response.fhir(status: status, outcome)
        if status == .unauthorized {
            response.headers[.wwwAuthenticate] = #"Bearer realm="fhir", error="invalid_token""#
        }
        return response
    }
}
