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
                "the revocation endpoint at \(endpoint.host) answered HTTP \(response.status)",
                host: endpoint.host,
                status: response.status
            )
        }
        endpoint.logger.debug("the issuer revoked the token", metadata: ["hint": "\(typeHint)"])
    }
}
