import Foundation
import Logging

extension Auth {
    /// Ends the session: revokes the refresh token at the issuer's revocation endpoint (RFC 7009, where
    /// the issuer offers one), forgets the tokens and zeroes the data key; `clearUser` also deletes the
    /// user's envelope and device secret.
    /// - Throws: ``VaultError``: `.revocationFailed` when the issuer refused to revoke, `isNetworkError` when
    ///   its revocation endpoint could not be reached; local data is cleared all the same.
    public func logout(clearUser: Bool = false) async throws(VaultError) {
        guard let ending = session else {
            if clearUser, let userId = try? await resolveUser(nil) { try await userStorage.clear(userId: userId) }
            return
        }
        endSession()
        var revocationError: VaultError?
        do {
            try await revoke(ending.refreshToken)
        } catch {
            revocationError = error
        }
        if clearUser { try await userStorage.clear(userId: ending.userId) }
        if let revocationError { throw revocationError }
    }

    private func revoke(_ refreshToken: RefreshToken) async throws(VaultError) {
        let metadata = try await metadata()
        guard let url = metadata.revocationEndpoint else {
            configuration.logger.debug("the issuer offers no revocation endpoint; nothing to revoke there")
            return
        }
        let body = FormEncoding.encode([
            "token": refreshToken.token, "token_type_hint": "refresh_token", "client_id": configuration.clientId,
        ])
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data(body.utf8),
            timeout: configuration.requestTimeout
        )
        let host = url.displayHost
        let response: HTTPResponse
        do {
            response = try await transport.send(request, logger: configuration.logger)
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
        configuration.logger.debug("the issuer revoked the refresh token")
    }
}
