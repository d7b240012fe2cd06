public import Foundation
import Logging
import VaultCrypto

extension Auth {
    /// Which page the issuer should show first.
    public enum Flow: Sendable {
        /// The login page.
        case signIn
        /// The registration page (`prompt=create`, where the issuer supports it).
        case signUp
    }

    /// The first login: the authorization code flow with PKCE (S256), state and nonce.
    ///
    /// `presentAuthorizationURL` gets the URL to show (a CLI prints it or opens a browser). With a loopback
    /// redirect URI the answer comes back to a listener on its host, at its port or one chosen now (RFC 8252), which
    /// waits for the redirect that carries this login's `state` (any other request is answered and the wait
    /// goes on); otherwise pass the redirect to ``handleRedirect(url:)``. The tokens are kept in memory: call
    /// ``storeRefreshToken(withNewPassword:)`` to seal the refresh token under a password.
    ///
    /// The user id is the `sub` of the id_token, once it is validated (OpenID Connect Core section 3.1.3.7:
    /// signature against the issuer's JWKS, `iss`, `aud`, `azp`, `exp`, `iat`, `nonce`). Without the `openid`
    /// scope (a plain OAuth 2 server) there is no id_token: `userId` is then the name to keep the login under.
    /// The access token is never read for the user: it is the resource server's, and may be opaque.
    ///
    /// With an empty ``VaultConfiguration/clientId`` the client first registers at the issuer's registration endpoint
    /// (RFC 7591) for this login's redirect URI; the registration is sealed with the refresh token
    /// (``clientRegistration``), so later logins use it.
    ///
    /// `scopes`, when given, are asked for instead of the configuration's (SMART's EHR launch adds `launch`).
    /// `authorizationParameters` go into the authorization request beside the standard ones, which they cannot
    /// replace (SMART on FHIR adds `aud` and `launch`). The answer's other fields (the granted `scope`, a launch
    /// context) become the session's context (``sessionContext``), sealed with the refresh token, and so do the
    /// id token (for ``endSessionURL()``) and what it says of the authentication (``loginContext``, with the
    /// `acr_values` asked for: an `acr` the issuer chose instead is no failure, ``LoginContext/acrMet`` shows it).
    /// - Returns: the user id.
    /// - Throws: ``VaultError``: a state mismatch, an error answer, a missing code or an id_token that fails
    ///   validation is `.openIDConnectFailed`; nothing is kept then.
    public func performOpenIDConnectFlow(
        flow: Flow = .signIn,
        userId namedUser: String? = nil,
        timeout: Duration = .seconds(300),
        scopes: [String]? = nil,
        authorizationParameters: [String: String] = [:],
        presentAuthorizationURL: @escaping @Sendable (URL) async -> Void
    ) async throws(VaultError) -> String {
        try await codeFlow(
            flow: flow,
            namedUser: namedUser,
            timeout: timeout,
            scopes: scopes,
            authorizationParameters: authorizationParameters,
            present: presentAuthorizationURL,
            paste: nil
        )
    }

    /// The first login by the code flow, for a user whose browser is on another device (an SSH session, a
    /// container): no listener waits; `readPastedRedirect` gets the authorization URL to show, and returns the URL
    /// the browser ended at, which the user copied from its address bar (nil: the user gave up).
    ///
    /// The configured redirect URI is sent exactly as it is (a loopback URI without a port stays without one: the
    /// browser fails to reach it, and shows the URL to copy). The pasted URL must be a redirect to it, and its
    /// `state`, `iss` and code are checked exactly as a listener's redirect is; then everything goes as in
    /// ``performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)``.
    /// - Returns: the user id.
    /// - Throws: ``VaultError`` `.openIDConnectFailed` for no URL, a URL that is not this login's redirect, a state
    ///   or `iss` that does not match, an error answer; nothing is kept then.
    public func performOpenIDConnectFlowWithPastedRedirect(
        flow: Flow = .signIn,
        userId namedUser: String? = nil,
        scopes: [String]? = nil,
        authorizationParameters: [String: String] = [:],
        readPastedRedirect: @escaping @Sendable (URL) async -> URL?
    ) async throws(VaultError) -> String {
        try await codeFlow(
            flow: flow,
            namedUser: namedUser,
            timeout: .seconds(0),
            scopes: scopes,
            authorizationParameters: authorizationParameters,
            present: nil,
            paste: readPastedRedirect
        )
    }

    /// The code flow, its redirect received by a listener or an app (`present` shows the URL) or pasted by the user
    /// (`paste`).
    private func codeFlow(
        flow: Flow,
        namedUser: String?,
        timeout: Duration,
        scopes: [String]?,
        authorizationParameters: [String: String],
        present: (@Sendable (URL) async -> Void)?,
        paste: (@Sendable (URL) async -> URL?)?
    ) async throws(VaultError) -> String {
        let metadata = try await metadata()
        let pkce = PKCE()
        let state = Base64URL.encode(SecureRandom.bytes(count: 16))
        let nonce = Base64URL.encode(SecureRandom.bytes(count: 16))
        let configured = configuration.redirectURI

        let receiver: LoopbackRedirectReceiver?
        let redirectURI: URL
        if paste == nil, configured.isLoopbackRedirect {
            // A configured port is used exactly (for issuers that match redirect URIs exactly); without one the
            // system picks a free port at each login (RFC 8252 section 7.3). The host and path stay as configured.
            let listener = try LoopbackRedirectReceiver(
                host: configured.host ?? "127.0.0.1",
                port: UInt16(clamping: configured.port ?? 0)
            )
            receiver = listener
            redirectURI = listener.redirectURI(for: configured)
        } else {
            receiver = nil
            redirectURI = configured
        }
        defer { receiver?.stop() }
        let requested = scopes ?? configuration.scopes
        // Without a configured client id, the client registers now, for this login's redirect URI (RFC 7591).
        let registration =
            configuration.clientId.isEmpty
            ? try await register(redirectURI: redirectURI, scopes: requested, metadata: metadata) : nil
        let clientId = registration?.clientId ?? configuration.clientId

        var fields = [
            "response_type": "code",
            "client_id": clientId,
            "redirect_uri": redirectURI.absoluteString,
            "scope": requested.joined(separator: " "),
            "state": state,
            "nonce": nonce,
            "code_challenge": pkce.challenge,
            "code_challenge_method": pkce.method,
        ]
        if flow == .signUp { fields["prompt"] = "create" }
        fields.merge(authorizationParameters) { standard, _ in standard }
        fields.merge(configuration.authorizationRequestParameters) { asked, _ in asked }
        let maxAge = try Self.maxAge(fields["max_age"])
        let requestedACR = Self.requestedACRValues(fields)
        let authorizationURL = Self.url(metadata.authorizationEndpoint, adding: fields)

        // The path the browser's request names, as it goes over the wire (percent-encoded; `/` for none).
        let wirePath = redirectURI.path(percentEncoded: true)
        let listenPath = wirePath.isEmpty ? "/" : wirePath
        var presenter: Task<Void, Never>?
        defer { presenter?.cancel() }
        let received: URL?
        if let paste {
            guard let pasted = await paste(authorizationURL) else {
                throw .openIDConnectFailed("no redirect URL was given")
            }
            // The rule an app's redirect meets in handleRedirect(url:).
            guard Self.isRedirect(pasted, to: redirectURI.absoluteString) else {
                throw .openIDConnectFailed(
                    "the URL given is not a redirect to this login's redirect URI \(redirectURI.absoluteString): "
                        + "copy the whole address the browser ended at"
                )
            }
            received = pasted
        } else if let receiver {
            if let present { presenter = Task { await present(authorizationURL) } }
            // withTaskCancellationHandler has no typed throws: the Result carries the error through.
            let waited = await withTaskCancellationHandler { () async -> Result<URL?, VaultError> in
                do throws(VaultError) {
                    return .success(
                        try await receiver.waitForRedirect(path: listenPath, state: state, timeout: timeout)
                    )
                } catch {
                    return .failure(error)
                }
            } onCancel: {
                receiver.stop()
            }
            received = try waited.get()
        } else {
            if let present { presenter = Task { await present(authorizationURL) } }
            let wait = UUID()
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expireRedirect(wait)
            }
            defer { timer.cancel() }
            received = await withCheckedContinuation { continuation in
                // One app redirect is awaited at a time: an earlier flow still waiting ends now, with no redirect.
                pendingRedirect?.continuation.resume(returning: nil)
                pendingRedirect = (wait, redirectURI.absoluteString, continuation)
            }
        }
        guard let redirect = received else {
            // Without a configured port, the port changed at this login and changes at the next: an issuer that
            // matches exactly needs a URI with a fixed port, registered there and configured here.
            let advice =
                receiver != nil && (configured.port ?? 0) == 0
                ? "register a redirect URI with a fixed port (such as \(redirectURI.absoluteString)) for client "
                    + "\(VaultError.printable(clientId)) there, and configure that URI as the redirect URI"
                : "register exactly \(redirectURI.absoluteString) for client "
                    + "\(VaultError.printable(clientId)) there, or configure the redirect URI it has"
            throw .openIDConnectFailed(
                "no redirect arrived within \(timeout.components.seconds) s. If the issuer showed an error about the "
                    + "redirect URI, \(advice)"
            )
        }

        let code = try Self.code(from: redirect, state: state, redirectURI: redirectURI, metadata: metadata)
        // DPoP (RFC 9449): a new key for this login, whose proofs go with the code; kept only when the issuer binds.
        let dpopKey = usesDPoP(metadata) ? DPoPKey() : nil
        let endpoint = try await tokenEndpoint(for: registration, dpop: dpopKey)
        let requestedAt = configuration.monotonicNow()
        let response: TokenResponse
        do {
            response = try await endpoint.exchange(
                code: code,
                verifier: pkce.verifier,
                redirectURI: redirectURI.absoluteString
            )
        } catch {
            guard error.isLoginExpired else { throw error }
            throw .openIDConnectFailed("the issuer refused the authorization code (invalid_grant)")
        }
        return try await beginSession(
            response,
            requestedAt: requestedAt,
            nonce: nonce,
            metadata: metadata,
            namedUser: namedUser,
            clientId: clientId,
            openID: requested.contains("openid"),
            maxAge: maxAge,
            requestedACRValues: requestedACR,
            registration: registration,
            dpopKey: dpopKey
        )
    }

    /// Ends a first login (the code flow's or a device login's) whose token endpoint answered `response` to a request
    /// sent at `requestedAt`: the id_token validated (with `nonce` when the login sent one), then the session begins
    /// with the tokens in memory, for ``storeRefreshToken(withNewPassword:)`` to seal, the id token and its
    /// ``LoginContext`` (with the `acr_values` the login asked for, `requestedACRValues`) included.
    /// - Returns: the user id.
    func beginSession(
        _ response: TokenResponse,
        requestedAt: ContinuousClock.Instant,
        nonce: String?,
        metadata: ProviderMetadata,
        namedUser: String?,
        clientId: String,
        openID: Bool,
        maxAge: Int?,
        requestedACRValues: [String] = [],
        registration: ClientRegistration?,
        dpopKey: DPoPKey?
    ) async throws(VaultError) -> String {
        let (userId, idToken) = try await user(
            from: response,
            nonce: nonce,
            metadata: metadata,
            namedUser: namedUser,
            clientId: clientId,
            openID: openID,
            maxAge: maxAge
        )
        guard let refresh = response.refreshToken else { throw .noRefreshToken }
        endSession()
        session = ActiveSession(
            userId: userId,
            refreshToken: RefreshToken(
                token: refresh,
                userId: userId,
                context: response.context,
                client: registration,
                dpopKey: boundKey(dpopKey, response),
                loginContext: idToken.map { LoginContext(idToken: $0, requestedACRValues: requestedACRValues) },
                idToken: idToken?.token
            )
        )
        let token = accessToken(response, userId: userId)
        keep(token, until: freshUntil(token, response, requestedAt: requestedAt))
        configuration.logger.debug("the OpenID Connect login is complete; the tokens are in memory")
        return userId
    }

    /// Passes an app's redirect to a waiting ``performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)``.
    /// - Returns: whether a flow was waiting for this URL.
    public func handleRedirect(url: URL) -> Bool {
        guard let pending = pendingRedirect, Self.isRedirect(url, to: pending.redirectURI) else { return false }
        pendingRedirect = nil
        pending.continuation.resume(returning: url)
        return true
    }

    /// Whether `url` is a redirect to `redirectURI` (as text): an app's, or one a user pasted. Compared by parts, not
    /// as a prefix of text (`…/callback` is not `…/callbackx`, `app:/cb` is not `app:/cb.evil`): the same scheme,
    /// host and port (letter case aside), the same path (none is `/` where there is a host), and every query field
    /// the redirect URI has with the same value (RFC 6749 section 3.1.2 allows them).
    static func isRedirect(_ url: URL, to redirectURI: String) -> Bool {
        guard let got = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let expected = URLComponents(string: redirectURI)
        else { return false }
        func path(_ parts: URLComponents) -> String {
            parts.percentEncodedPath.isEmpty && parts.host != nil ? "/" : parts.percentEncodedPath
        }
        guard got.scheme?.lowercased() == expected.scheme?.lowercased(),
            got.host?.lowercased() == expected.host?.lowercased(),
            got.port == expected.port,
            path(got) == path(expected)
        else { return false }
        let fields = got.queryItems ?? []
        return (expected.queryItems ?? []).allSatisfy { fields.contains($0) }
    }

    /// Ends the wait `wait` for an app's redirect, when its time is up and it still waits.
    private func expireRedirect(_ wait: UUID) {
        guard let pending = pendingRedirect, pending.id == wait else { return }
        pendingRedirect = nil
        pending.continuation.resume(returning: nil)
    }

    /// Seals the session's refresh token under a new password (a new key at the key service) and keeps the
    /// unlocked envelope, so the session's later rotations are persisted too. Call it after the OpenID
    /// Connect flow.
    public func storeRefreshToken(withNewPassword password: String) async throws(VaultError) {
        guard let current = session else { throw .notLoggedIn }
        try await userStorage.withSessionLock { (held) async throws(VaultError) in
            let envelope = try await userStorage.sealUnderNewPassword(
                current.refreshToken,
                password: password,
                under: held
            )
            if session?.id == current.id { session?.envelope = envelope }
        }
    }

    /// `base` with `fields` added to its query, form-encoded (a `+` in a value stays a plus).
    static func url(_ base: URL, adding fields: [String: String]) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormEncoding.encode(fields)
        return components.url!
    }

    /// The authorization code of `redirect`, once its `state` and, where the issuer sends one, its `iss` (RFC 9207:
    /// the answer comes from the issuer this login went to, not from another in a mix-up) check out.
    static func code(
        from redirect: URL,
        state: String,
        redirectURI: URL,
        metadata: ProviderMetadata
    ) throws(VaultError) -> String {
        let items = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard value("state") == state else {
            throw .openIDConnectFailed("the redirect's state does not match this login (possible forgery)")
        }
        if let issuer = value("iss"), let expected = metadata.issuerIdentifier {
            guard issuer == expected else {
                throw .openIDConnectFailed(
                    "the redirect says it comes from \(VaultError.printable(issuer, limit: 200)), not from "
                        + "\(expected) (RFC 9207)"
                )
            }
        } else if metadata.authorizationResponseIssuer {
            throw .openIDConnectFailed("the redirect carries no iss, which this issuer always sends (RFC 9207)")
        }
        if let error = value("error") {
            // Query values are form-encoded: a `+` is a space (URLComponents leaves it as it is).
            let description = value("error_description")?.replacingOccurrences(of: "+", with: " ")
            let detail = description.map { ": \(VaultError.printable($0, limit: 200))" } ?? ""
            // An issuer that names the redirect URI as the trouble: say which one to register.
            let hint =
                description?.lowercased().contains("redirect") == true
                ? ". Register exactly \(redirectURI.absoluteString) for this client there, or configure the one it has"
                : ""
            throw .openIDConnectFailed("the issuer answered \(VaultError.printable(error))\(detail)\(hint)")
        }
        guard let code = value("code"), !code.isEmpty else {
            throw .openIDConnectFailed("the redirect carries no authorization code")
        }
        return code
    }

    /// A new registration of this client at the issuer (RFC 7591), for a login redirecting to `redirectURI`.
    /// - Throws: ``VaultError`` `.registrationFailed` when the issuer offers no registration endpoint or refuses.
    private func register(
        redirectURI: URL,
        scopes: [String],
        metadata: ProviderMetadata
    ) async throws(VaultError) -> ClientRegistration {
        guard let url = metadata.registrationEndpoint else {
            throw .registrationFailed(
                "no client id is configured, and the issuer \(metadata.issuer.displayHost) offers no registration "
                    + "endpoint (registration_endpoint). Register the client there and configure its client id",
                host: metadata.issuer.displayHost,
                status: nil
            )
        }
        return try await registrationEndpoint.register(
            at: url,
            configuration.registration,
            redirectURI: redirectURI,
            scopes: scopes,
            supportedMethods: metadata.tokenEndpointAuthMethods
        )
    }

    /// `max_age` as sent (whole seconds, 0 or more), or nil when none is.
    /// - Throws: ``VaultError`` (a configuration error) for anything else: the issuer would refuse it, and it
    ///   could not be checked.
    static func maxAge(_ text: String?) throws(VaultError) -> Int? {
        guard let text else { return nil }
        guard let seconds = Int(text), seconds >= 0, text.allSatisfy(\.isASCII) else {
            throw .invalidConfiguration(
                "max_age is \(VaultError.printable(text, limit: 40)); it is a whole number of seconds, 0 or more"
            )
        }
        return seconds
    }

    /// The `acr_values` an authorization request's `fields` ask for, in order: kept with the login, since the issuer
    /// may answer with another class (they are voluntary), and the app then sees it in the login context.
    static func requestedACRValues(_ fields: [String: String]) -> [String] {
        (fields["acr_values"] ?? "").split(separator: " ").map(String.init)
    }

    /// The validated id_token's `sub` and the id_token; without an id_token, the name the caller gave.
    private func user(
        from response: TokenResponse,
        nonce: String?,
        metadata: ProviderMetadata,
        namedUser: String?,
        clientId: String,
        openID: Bool,
        maxAge: Int?
    ) async throws(VaultError) -> (userId: String, idToken: JWT?) {
        guard let idToken = response.idToken else {
            // An OpenID Provider asked for openid must answer with an id_token: without one nothing is validated,
            // so nothing is kept. A caller's name stands in only where no id_token was asked for.
            guard !openID else {
                throw .openIDConnectFailed("the issuer gave no id token, though the openid scope was asked for")
            }
            if maxAge != nil {
                throw VaultError(
                    .authenticationTooOld,
                    "The login asked for max_age, but the issuer gave no id token to say when the user authenticated "
                        + "(ask for the openid scope).",
                    origin: .issuer
                )
            }
            guard let namedUser, !namedUser.isEmpty else {
                throw .openIDConnectFailed(
                    "the issuer gave no id token to name the user (ask for the openid scope, or name the user)"
                )
            }
            return (namedUser, nil)
        }
        guard let issuer = metadata.issuerIdentifier else {
            throw .openIDConnectFailed(
                "the server states no issuer, so its id token cannot be checked (ask without the openid scope, and "
                    + "name the user)"
            )
        }
        let verifier = IDTokenVerifier(
            issuer: issuer,
            clientId: clientId,
            // The leeway is also the refresh margin; a generous one must not make id_token times lax.
            leeway: min(configuration.leeway, IDTokenVerifier.maximumClockSkew),
            maxAge: maxAge
        )
        let claims = try await verifier.verify(
            idToken,
            nonce: nonce,
            keys: try providerKeys(),
            now: configuration.now()
        )
        configuration.logger.debug("the id token is valid", metadata: ["alg": "\(claims.algorithm)"])
        return (claims.userId, claims)
    }
}
