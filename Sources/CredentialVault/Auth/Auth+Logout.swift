public import Foundation
import Logging

extension Auth {
    /// Ends the session and the stored login: revokes the refresh token at the issuer's revocation endpoint
    /// (RFC 7009), erases it from the envelope, forgets the tokens and zeroes the data key; `clearUser` also deletes
    /// the user's envelope and device secret, and the client this library registered for the login, where the issuer
    /// lets it (RFC 7592).
    ///
    /// The token revoked is the one stored in the envelope, read under the session lock (another process may
    /// have rotated it since this session began), with the client's authentication. Under the same lock, and
    /// whatever the issuer answers, the refresh token is erased from the envelope: the user stays listed (with its
    /// key and device-unlock settings) but no login opens from it until a new one is stored
    /// (``UserStorage/storeRefreshToken(_:withNewPassword:)``). So a thrown revocation error says only what the
    /// issuer did: the login is ended here all the same.
    /// - Throws: ``VaultError``: `.revocationFailed` when the issuer refused to revoke or offers no revocation
    ///   endpoint (the token then stays valid at the issuer until it expires; the message says so),
    ///   `isNetworkError` when its revocation endpoint could not be reached; a storage error when the login
    ///   could not be erased here (then nothing was erased).
    /// - Returns: the URL that ends the user's session at the issuer in the browser too (``endSessionURL()``), when
    ///   the issuer offers RP-initiated logout; nil otherwise. The login here is ended either way; opening the URL
    ///   is the user's (or the app's) step. A caller that needs the URL even when revocation fails asks
    ///   ``endSessionURL()`` first.
    @discardableResult
    public func logout(clearUser: Bool = false) async throws(VaultError) -> URL? {
        guard let ending = session else {
            if clearUser, let userId = try? await resolveUser(nil) { try await userStorage.clear(userId: userId) }
            return nil
        }
        // Before the session ends: its id token is the hint. A discovery that fails leaves no URL, not an error.
        let browserLogout = try? await endSessionURL()
        endSession()
        var revocationError: VaultError?
        try await userStorage.withSessionLock { (held) async throws(VaultError) in
            do throws(VaultError) {
                try await revokeStoredToken(of: ending, under: held)
            } catch {
                revocationError = error
            }
            if !clearUser { try await userStorage.eraseRefreshToken(userId: ending.userId, under: held) }
        }
        if clearUser {
            try await userStorage.clear(userId: ending.userId)
            await deleteRegistration(of: ending)
        }
        if let revocationError { throw revocationError }
        return browserLogout
    }

    /// The URL that ends the user's session at the issuer in the browser (OpenID Connect RP-Initiated Logout 1.0),
    /// when discovery lists an `end_session_endpoint`: with `client_id`, `id_token_hint` when the login has an id
    /// token (its latest, sealed with the refresh token, so a login opened with the password in a new process has it
    /// too; ``idToken``), and `post_logout_redirect_uri` when ``VaultConfiguration/postLogoutRedirectURI`` is set.
    /// Nil when the issuer offers no such endpoint. The URL carries the id token: show it to the user, never log it.
    ///
    /// Ending the session here (``logout(clearUser:)``) does not end the issuer's single sign-on session in the
    /// browser: the next login there would go through without a password. Opening this URL does.
    /// - Throws: ``VaultError`` from discovery.
    public func endSessionURL() async throws(VaultError) -> URL? {
        let metadata = try await metadata()
        guard let endpoint = metadata.endSessionEndpoint,
            var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        else { return nil }
        var fields: [(String, String)] = []
        if let idToken { fields.append(("id_token_hint", idToken.token)) }
        fields.append(("client_id", session?.refreshToken.client?.clientId ?? configuration.clientId))
        if let redirect = configuration.postLogoutRedirectURI {
            fields.append(("post_logout_redirect_uri", redirect.absoluteString))
        }
        let added = fields.map { "\($0.0)=\(FormEncoding.escape($0.1))" }.joined(separator: "&")
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + added
        return components.url
    }

    /// Deletes the client this library registered for the login (RFC 7592), where the issuer manages registrations:
    /// its secrets went with the envelope, so the client would only linger at the issuer. Best effort: a failure is
    /// logged, and the client stays registered there.
    private func deleteRegistration(of ending: ActiveSession) async {
        guard let registration = ending.refreshToken.client, registration.registrationClientURI != nil else { return }
        do {
            try await registrationEndpoint.delete(registration)
        } catch {
            configuration.logger.debug(
                "the client's registration could not be deleted",
                metadata: ["error": "\(error)"]
            )
        }
    }

    /// Revokes the session's refresh token as the envelope holds it now. Under the session lock, so no other process
    /// rotates it between the read and the revocation.
    private func revokeStoredToken(
        of ending: ActiveSession,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) {
        guard let envelope = ending.envelope else { return try await revoke(ending.refreshToken) }
        let stored: RefreshToken
        do {
            stored = try await userStorage.storedRefreshToken(in: envelope, under: held).refreshToken
        } catch {
            // An envelope that no longer opens (replaced by another password, removed): the session's own token
            // is the best left to revoke.
            configuration.logger.debug("the stored envelope did not open at logout; revoking the session's token")
            return try await revoke(ending.refreshToken)
        }
        try await revoke(stored)
    }

    private func revoke(_ refreshToken: RefreshToken) async throws(VaultError) {
        let metadata = try await metadata()
        guard let url = metadata.revocationEndpoint else { throw .revocationNotOffered }
        var endpoint = try await authenticated(
            url,
            methods: metadata.revocationEndpointAuthMethods ?? metadata.tokenEndpointAuthMethods,
            as: refreshToken.client
        )
        // A server that binds refresh tokens to the key may ask for the key's proof to revoke one too.
        endpoint.dpop = refreshToken.dpopKey.map(dpopProofs(for:))
        try await RevocationEndpoint(endpoint: endpoint).revoke(refreshToken.token)
    }
}
