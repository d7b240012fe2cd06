import Foundation
import Logging

/// The revocation endpoint (RFC 7009): a form-encoded POST of a refresh token, with the client's authentication.
struct RevocationEndpoint: Sendable {
    let url: URL
    let clientId: String
    let authentication: ClientAuthentication
    /// `revocation_endpoint_auth_methods_supported` (else the token endpoint's list), when discovery has one.
    let supportedMethods: [String]?
    let now: @Sendable () -> Date
    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    /// Revokes `refreshToken` (with it, an issuer revokes the token family).
    /// - Throws: ``VaultError``: `.revocationFailed` for any answer but 200, a network error when there is none.
    func revoke(_ refreshToken: String) async throws(VaultError) {
        let request = try await authentication.formRequest(
            to: url,
            fields: ["token": refreshToken, "token_type_hint": "refresh_token"],
            clientId: clientId,
            supported: supportedMethods,
            now: now(),
            timeout: timeout
        )
        let host = url.displayHost
        let response: HTTPResponse
        do {
            response = try await transport.send(request, logger: logger)
        } catch {
            throw .revocationUnreachable(error)
        }
        guard response.status == 200 else {
            throw .revocationFailed(
                "the revocation endpoint at \(host) answered HTTP \(response.status)",
                host: host,
                status: response.status
            )
        }
        logger.debug("the issuer revoked the refresh token")
    }
}
