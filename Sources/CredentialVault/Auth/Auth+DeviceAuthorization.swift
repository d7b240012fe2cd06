import Foundation
import Logging

extension Auth {
    /// The first login on a device without a browser: the device authorization grant (RFC 8628), for an issuer
    /// whose discovery lists `device_authorization_endpoint`.
    ///
    /// The client asks for a device code (with the configured client's authentication, as at the token endpoint),
    /// hands `presentUserCode` what the user needs (``DeviceAuthorization``: the verification URI, the user code
    /// and, where given, the URI with the code filled in), and once it returns polls the token endpoint: after the
    /// issuer's `interval` (5 s when it gives none), 5 s more after every `slow_down`, for that poll and every later
    /// one. A poll that gets no answer is sent again after twice the interval (RFC 8628 section 3.5), up to four times
    /// in a row. It stops when the user approves, denies, or the code expires (`expires_in`, at most an hour), and
    /// after `maximumPolls` polls at most. The waits go through ``VaultConfiguration/sleep``; cancelling the task ends the
    /// wait at once.
    ///
    /// The tokens are then handled as the code flow's are
    /// (``performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)``):
    /// the id_token validated (there is no nonce to check: RFC 8628 sends none), DPoP as the configuration says, the
    /// tokens kept in memory for ``storeRefreshToken(withNewPassword:)``.
    /// - Parameters:
    ///   - namedUser: (`userId:`) the name to keep the login under when no id_token names the user (no `openid`
    ///     scope).
    ///   - scopes: asked for instead of the configuration's.
    ///   - maximumPolls: the most token requests made for the code.
    ///   - presentUserCode: shows the user where to go and what to enter; polling starts when it returns.
    /// - Returns: the user id.
    /// - Throws: ``VaultError``: `isAuthorizationDenied` when the user denied, `isDeviceCodeExpired` when the code
    ///   expired (or the polls ran out), `isNetworkError` when five polls in a row got no answer, `.cancelled` when
    ///   the task was cancelled, `isConfigurationError` when the
    ///   issuer offers no device login or no client id is configured; nothing is kept then.
    public func performDeviceAuthorizationFlow(
        userId namedUser: String? = nil,
        scopes: [String]? = nil,
        maximumPolls: Int = 720,
        presentUserCode: @escaping @Sendable (DeviceAuthorization) async -> Void
    ) async throws(VaultError) -> String {
        let metadata = try await metadata()
        guard let url = metadata.deviceAuthorizationEndpoint else {
            throw .deviceAuthorizationNotOffered(issuer: metadata.issuer.absoluteString)
        }
        guard !configuration.clientId.isEmpty else {
            throw .invalidConfiguration(
                "a device login needs the client id the issuer gave this client (no client registers itself for it)"
            )
        }
        let requested = scopes ?? configuration.scopes
        let device = DeviceAuthorizationEndpoint(
            endpoint: try await authenticated(url, methods: metadata.tokenEndpointAuthMethods, as: nil)
        )
        // Step-up as in the code flow: the configuration's max_age and acr_values go with the request, `auth_time`
        // is checked against max_age, and the classes asked for are kept with the login.
        let asked = configuration.authorizationRequestParameters
        let maxAge = try Self.maxAge(asked["max_age"])
        let requestedACR = Self.requestedACRValues(asked)
        let (deviceCode, shown) = try await device.authorize(scopes: requested, parameters: asked)
        // The code's lifetime runs from its issue, however long the presenter takes.
        let issued = configuration.monotonicNow()
        // DPoP (RFC 9449): a new key for this login, whose proofs go with every poll; kept only when the issuer binds.
        let dpopKey = usesDPoP(metadata) ? DPoPKey() : nil
        let endpoint = try await tokenEndpoint(for: nil, dpop: dpopKey)
        await presentUserCode(shown)
        let (response, requestedAt) = try await poll(
            endpoint,
            deviceCode: deviceCode,
            shown: shown,
            issued: issued,
            maximumPolls: maximumPolls
        )
        return try await beginSession(
            response,
            requestedAt: requestedAt,
            nonce: nil,
            metadata: metadata,
            namedUser: namedUser,
            clientId: configuration.clientId,
            openID: requested.contains("openid"),
            maxAge: maxAge,
            requestedACRValues: requestedACR,
            registration: nil,
            dpopKey: dpopKey
        )
    }

    /// The polls in a row that may get no answer (a dropped connection, a timeout) before the flow ends with that
    /// network error; each doubles the wait before the next, up to ``DeviceAuthorization/maximumInterval``, and an
    /// answer brings it back to the issuer's interval.
    static let maximumUnansweredPolls = 4

    /// Polls `endpoint` with `deviceCode` until it gives tokens (RFC 8628 section 3.5): the tokens, and when the
    /// request that got them was sent.
    private func poll(
        _ endpoint: TokenEndpoint,
        deviceCode: String,
        shown: DeviceAuthorization,
        issued started: ContinuousClock.Instant,
        maximumPolls: Int
    ) async throws(VaultError) -> (TokenResponse, ContinuousClock.Instant) {
        var interval = shown.interval
        // Seconds waited as asked, and on the device's clock: the code's lifetime is counted on whichever is longer.
        var waited = 0
        // Polls in a row that got no answer.
        var unanswered = 0
        for _ in 0..<max(maximumPolls, 0) {
            let elapsed = max(waited, Int((configuration.monotonicNow() - started).components.seconds))
            // After polls without an answer, twice the interval for each (up to the ceiling); back to the issuer's
            // interval once one is answered.
            let wait = unanswered == 0 ? interval : min(interval << unanswered, DeviceAuthorization.maximumInterval)
            // A poll after the code's lifetime could only hear expired_token.
            guard elapsed + wait <= shown.expiresIn else { throw .deviceCodeExpired(host: endpoint.endpoint.host) }
            do {
                try await configuration.sleep(.seconds(wait))
            } catch {
                throw .cancelled
            }
            if Task.isCancelled { throw .cancelled }
            waited += wait
            let requestedAt = configuration.monotonicNow()
            let answer: DeviceCodePoll
            do {
                answer = try await endpoint.pollDeviceCode(deviceCode)
                unanswered = 0
            } catch {
                // RFC 8628 section 3.5: a poll that got no answer is tried again, less often (exponential backoff):
                // a dropped network must not cost the user the code they may be typing right now.
                if error.isNetworkError, unanswered < Self.maximumUnansweredPolls {
                    unanswered += 1
                    configuration.logger.debug("a device-code poll got no answer; polling again later, less often")
                    continue
                }
                guard error.isLoginExpired else { throw error }
                throw .openIDConnectFailed("the issuer refused the device code (invalid_grant)")
            }
            switch answer {
            case .issued(let response): return (response, requestedAt)
            case .pending: continue
            // RFC 8628 section 3.5: for this and every later poll.
            case .slowDown: interval += 5
            }
        }
        configuration.logger.debug("the device login's polls ran out", metadata: ["polls": "\(maximumPolls)"])
        throw .deviceCodeExpired(host: endpoint.endpoint.host)
    }
}
