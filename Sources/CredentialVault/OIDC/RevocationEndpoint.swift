import Foundation
import Logging

/// The revocation endpoint (RFC 7009): a form-encoded POST of a token, with the client's authentication.
struct RevocationEndpoint: Sendable {
    /// The endpoint, with `revocation_endpoint_auth_methods_supported` (else the token endpoint's) as its methods.
    let endpoint: AuthenticatedEndpoint

    /// Revokes `token` (a refresh token by default: with it, an issuer revokes the token family).
    /// - Throws: ``VaultError``: `.revocationFailed` for any answer but 200, a network error when there is none.
    func revoke(_ token: String, typeHint: String = "refresh_token") async throws(VaultError) {
        let response: HTTPResponse
        switch try await endpoint.post(["token": token, "token_type_hint": typeHint]) {
        case .success(let answer): response = answer
        case .failure(let error): throw .revocationUnreachable(error)
        }
        guard response.status == 200 else {
            throw .revocationFailed(
                "the revocation endpoint at \(endpoint.host) answered HTTP \(response.status)"
                    + Self.issuerWords(response.body),
                host: endpoint.host,
                status: response.status
            )
        }
        endpoint.logger.debug("the issuer revoked the token", metadata: ["hint": "\(typeHint)"])
    }

    /// The issuer's own words in an error answer (RFC 6749 section 5.2: `error` and maybe `error_description`), as
    /// printable text; empty when the body says nothing readable. Read with the strict parser, which bounds depth.
    static func issuerWords(_ body: Data) -> String {
        guard body.count <= 16 * 1024, let object = try? StrictJSONParser.parse(Array(body)),
            let code = object["error"]?.stringValue
        else { return "" }
        let words = object["error_description"]?.stringValue.map { ", \(VaultError.printable($0, limit: 200))" }
        return ": \(VaultError.printable(code, limit: 100))\(words ?? "")"
    }
}
