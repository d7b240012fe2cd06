public import Foundation
import Logging

extension Auth {
    /// An access token for one API: RFC 8707's `resource` on a refresh, or token exchange (RFC 8693), kept apart from
    /// the session's own token.
    ///
    /// The token is kept in memory per resource, scopes and method, and handed out while it is fresh by the rule of
    /// ``getAccessToken(forceRefresh:)`` (``AccessTokenFreshness``); concurrent callers for one key share one request.
    /// The session's access token is never replaced by a scoped one. With ``ScopedTokenMethod/refresh`` a refresh
    /// token the issuer rotates in the answer is sealed into the envelope before the token is handed out, exactly as
    /// at the session's own refresh, and becomes the session's refresh token; the answer's other fields (its
    /// narrower `scope`) are not kept as the login's context. Token exchange sends the session's access token as the
    /// subject and no refresh token; a refresh token in its answer is ignored.
    /// - Parameters:
    ///   - resource: the API, an absolute URL without a fragment (RFC 8707 section 2).
    ///   - scopes: narrower scopes for this token (sent as `scope`); nil for what the issuer grants by default.
    ///   - method: ``ScopedTokenMethod/refresh`` by default; ``ScopedTokenMethod/automatic`` uses token exchange when
    ///     discovery's `grant_types_supported` lists it.
    /// - Returns: the token for `resource`: the kept one while it is fresh, else a new one.
    /// - Throws: ``VaultError``: `.notLoggedIn`; `.resourceRefused` when the issuer answers `invalid_target` or the
    ///   resource is not usable; `isLoginExpired` (a dead refresh token) ends the session, as at any refresh.
    public func getAccessToken(
        resource: URL,
        scopes: [String]? = nil,
        method: ScopedTokenMethod = .refresh
    ) async throws(VaultError) -> AccessToken {
        guard resource.scheme != nil, resource.host?.isEmpty == false, resource.fragment == nil else {
            throw .resourceNotUsable(resource)
        }
        guard let current = session else { throw .notLoggedIn }
        let key = ScopedTokenKey(sessionId: current.id, resource: resource, scopes: scopes, method: method)
        if let token = scopedTokens.freshToken(key, now: configuration.monotonicNow()) { return token }
        if let inFlight = scopedTokens.request(key) { return try await inFlight.value.get() }
        let task = Task { await self.fetchScopedToken(key) }
        scopedTokens.start(key, task)
        return try await task.value.get()
    }

    /// One request for `key`'s token; the result is kept (or the old one dropped) and the request marked ended.
    private func fetchScopedToken(_ key: ScopedTokenKey) async -> Result<AccessToken, VaultError> {
        var kept: (token: AccessToken, until: ContinuousClock.Instant?)?
        defer { if session?.id == key.sessionId { scopedTokens.finish(key, keeping: kept?.token, until: kept?.until) } }
        do throws(VaultError) {
            let exchange: Bool
            switch key.method.base {
            case .refresh: exchange = false
            case .tokenExchange: exchange = true
            case .automatic:
                exchange = try await metadata().grantTypesSupported?.contains(TokenExchangeRequest.grantType) ?? false
            }
            let issued = try await exchange ? exchangedToken(key) : refreshedToken(key)
            kept = issued
            return .success(issued.token)
        } catch {
            if error.isLoginExpired, session?.id == key.sessionId {
                configuration.logger.debug("the issuer refused the refresh token; the session ends")
                endSession()
            }
            return .failure(error)
        }
    }

    /// A refresh_token grant with `resource` (and `scope`): the session's refresh path (``redeemForSession(_:extraFields:)``),
    /// so a rotated refresh token is sealed before the access token is handed out.
    private func refreshedToken(
        _ key: ScopedTokenKey
    ) async throws(VaultError) -> (token: AccessToken, until: ContinuousClock.Instant?) {
        guard let current = session, current.id == key.sessionId else { throw .notLoggedIn }
        var fields = ["resource": key.resource]
        if let scope = key.scopeField { fields["scope"] = scope }
        let redeemed = try await redeemForSession(current, extraFields: fields)
        configuration.logger.debug("access token for one resource issued", metadata: ["grant": "refresh_token"])
        return (redeemed.accessToken, redeemed.freshUntil)
    }

    /// A token exchange (RFC 8693) with the session's access token as the subject.
    private func exchangedToken(
        _ key: ScopedTokenKey
    ) async throws(VaultError) -> (token: AccessToken, until: ContinuousClock.Instant?) {
        let subject = try await getAccessToken()
        guard let current = session, current.id == key.sessionId else { throw .notLoggedIn }
        let request = TokenExchangeRequest(subjectToken: subject.token, resource: key.resource, scope: key.scopeField)
        let requestedAt = configuration.monotonicNow()
        let endpoint = try await tokenEndpoint(for: current.refreshToken.client, dpop: current.refreshToken.dpopKey)
        let response = try await endpoint.grant(request.fields)
        let token = accessToken(response, userId: current.userId)
        configuration.logger.debug("access token for one resource issued", metadata: ["grant": "token-exchange"])
        return (token, freshUntil(token, response, requestedAt: requestedAt))
    }
}
