import Foundation
import VaultCrypto

/// Password login, always-fresh access tokens, logout that revokes, and the first login by OpenID
/// Connect (THP's `THPAuth`).
///
/// A session begins with ``loginWithPassword(userId:password:storeNewRefreshToken:)``,
/// ``loginWithDeviceUnlock(userId:storeNewRefreshToken:)`` or ``performOpenIDConnectFlow(flow:presentAuthorizationURL:)``.
/// It keeps the access token, the refresh token and, after a password or device login, the data key of
/// the user's envelope, so every rotated refresh token is sealed and written before anyone sees the
/// access token that came with it. The data key is zeroed when the session ends.
public actor Auth {
    /// Which page the issuer should show first.
    public enum Flow: Sendable {
        /// The login page.
        case signIn
        /// The registration page (`prompt=create`, where the issuer supports it).
        case signUp
    }

    private struct Session {
        let id = UUID()
        let userId: String
        var refreshToken: RefreshToken
        /// nil after an OpenID Connect login until a password is set: rotated tokens then live in memory only.
        var vault: UserStorage.Session?
    }

    /// How long the steps of a password login took: what the login benchmark reports.
    public struct LoginTimings: Sendable {
        /// Argon2id.
        public let keyDerivation: Duration
        /// The key service's `key` call.
        public let keyService: Duration
        /// The refresh_token grant.
        public let tokenEndpoint: Duration
        /// Sealing the rotated refresh token and writing the envelope (zero when nothing rotated).
        public let sealAndWrite: Duration
    }

    /// The timings of the last password login, for diagnostics and benchmarks.
    public private(set) var lastLoginTimings: LoginTimings?

    private let configuration: VaultConfiguration
    private let userStorage: UserStorage
    private let transport: any HTTPTransport
    private var metadataCache: ProviderMetadata?
    private var session: Session?
    /// The session's access token and the moment it stops being handed out (its expiry minus the leeway),
    /// kept apart from the session so the hot path of ``getAccessToken(forceRefresh:)`` copies nothing else.
    private var fresh: (token: JWT, until: Date)?
    private var refreshInFlight: (sessionId: UUID, task: Task<Result<JWT, VaultError>, Never>)?
    private var pendingRedirect: (prefix: String, continuation: CheckedContinuation<URL, Never>)?

    /// An auth over `userStorage` (use ``Vault`` to build both from one configuration).
    public init(
        configuration: VaultConfiguration,
        userStorage: UserStorage,
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.configuration = configuration
        self.userStorage = userStorage
        self.transport = transport
    }

    // MARK: State

    /// Whether a session is open.
    public var isLoggedIn: Bool { session != nil }

    /// The user of the open session.
    public var currentUserId: String? { session?.userId }

    /// The session's refresh token (a secret: never log it).
    public var refreshToken: RefreshToken? { session?.refreshToken }

    // MARK: Password and device login

    /// Opens the stored refresh token with `password`, redeems it at the token endpoint and returns the
    /// access token. A rotated refresh token is sealed with the same data key and written atomically
    /// before this returns (unless `storeNewRefreshToken` is false: then it lives in memory only).
    /// - Parameter userId: the user; nil when exactly one user is stored.
    /// - Throws: ``VaultError``: `isWrongPassword`, `isKeyLocked`, `.auth(.refreshTokenExpired)`, ...
    public func loginWithPassword(
        userId: String? = nil,
        password: String,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> JWT {
        let userId = try await resolveUser(userId)
        let lock = try await userStorage.sessionLock()
        defer { withExtendedLifetime(lock) {} }
        let (token, vault) = try await userStorage.openSession(userId: userId, password: password)
        return try await begin(userId: userId, refreshToken: token, vault: vault, persist: storeNewRefreshToken)
    }

    /// Like ``loginWithPassword(userId:password:storeNewRefreshToken:)`` with the device secret instead of
    /// the password (THP's biometric login).
    public func loginWithDeviceUnlock(
        userId: String? = nil,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> JWT {
        let userId = try await resolveUser(userId)
        let lock = try await userStorage.sessionLock()
        defer { withExtendedLifetime(lock) {} }
        let (token, vault) = try await userStorage.openSessionViaDeviceUnlock(userId: userId)
        return try await begin(userId: userId, refreshToken: token, vault: vault, persist: storeNewRefreshToken)
    }

    private func begin(
        userId: String,
        refreshToken: RefreshToken,
        vault: UserStorage.Session,
        persist: Bool
    ) async throws(VaultError) -> JWT {
        endSession()
        let redeemed = try await redeem(refreshToken, vault: persist ? vault : nil)
        if let timings = vault.timings {
            lastLoginTimings = LoginTimings(
                keyDerivation: timings.kdf,
                keyService: timings.keyService,
                tokenEndpoint: redeemed.tokenEndpointTime,
                sealAndWrite: redeemed.persistTime
            )
        }
        session = Session(
            userId: userId,
            refreshToken: redeemed.refreshToken,
            vault: persist ? vault : nil
        )
        keep(redeemed.accessToken, expiry: redeemed.expiry)
        return redeemed.accessToken
    }

    // MARK: Access tokens

    /// The session's access token while it stays valid for the leeway, otherwise a new one.
    ///
    /// Concurrent callers share one refresh. A rotated refresh token is written to the envelope before
    /// any caller gets the new access token, so a restart never strands the user.
    /// - Throws: ``VaultError``: `.auth(.notLoggedIn)`; `.auth(.refreshTokenExpired)` ends the session.
    public func getAccessToken(forceRefresh: Bool = false) async throws(VaultError) -> JWT {
        if !forceRefresh, let fresh, configuration.now() < fresh.until { return fresh.token }
        guard let current = session else { throw .auth(.notLoggedIn) }
        if let inFlight = refreshInFlight, inFlight.sessionId == current.id {
            return try await inFlight.task.value.get()
        }
        let task = Task { await self.refreshSession(current.id) }
        refreshInFlight = (current.id, task)
        return try await task.value.get()
    }

    private func refreshSession(_ id: UUID) async -> Result<JWT, VaultError> {
        defer { if refreshInFlight?.sessionId == id { refreshInFlight = nil } }
        do {
            guard let current = session, current.id == id else { throw VaultError.auth(.notLoggedIn) }
            var lock: SessionLock?
            var refreshToken = current.refreshToken
            if let vault = current.vault {
                lock = try await userStorage.sessionLock()
                // Another process may have rotated the stored token meanwhile: the envelope is the truth.
                refreshToken = try await userStorage.storedRefreshToken(session: vault)
            }
            defer { withExtendedLifetime(lock) {} }
            let redeemed = try await redeem(refreshToken, vault: current.vault)
            guard session?.id == id else { throw VaultError.auth(.notLoggedIn) }
            session?.refreshToken = redeemed.refreshToken
            keep(redeemed.accessToken, expiry: redeemed.expiry)
            return .success(redeemed.accessToken)
        } catch let error as VaultError {
            if case .auth(.refreshTokenExpired) = error, session?.id == id { endSession() }
            return .failure(error)
        } catch {
            return .failure(.auth(.failedToGetAccessToken(reason: "\(type(of: error))")))
        }
    }

    private struct Redeemed {
        let accessToken: JWT
        let refreshToken: RefreshToken
        let expiry: Date?
        let tokenEndpointTime: Duration
        let persistTime: Duration
    }

    /// One refresh_token grant; a rotated refresh token is persisted (when `vault` is given) before returning.
    private func redeem(_ refreshToken: RefreshToken, vault: UserStorage.Session?) async throws(VaultError) -> Redeemed
    {
        let endpoint = try await tokenEndpoint()
        let clock = ContinuousClock()
        let started = clock.now
        let response: TokenResponse
        do {
            response = try await endpoint.refresh(refreshToken.token)
        } catch {
            throw .auth(error)
        }
        let answered = clock.now
        let rotated = response.refreshToken.map { RefreshToken(token: $0, userId: refreshToken.userId) }
        if let rotated, rotated != refreshToken, let vault {
            try await userStorage.persist(rotated, session: vault)
        }
        let accessToken = try accessJWT(response, userId: refreshToken.userId)
        return Redeemed(
            accessToken: accessToken,
            refreshToken: rotated ?? refreshToken,
            expiry: expiry(of: accessToken, response),
            tokenEndpointTime: answered - started,
            persistTime: clock.now - answered
        )
    }

    private func accessJWT(_ response: TokenResponse, userId: String) throws(VaultError) -> JWT {
        let jwt: JWT
        do {
            jwt = try JWT(token: response.accessToken)
        } catch {
            throw .auth(.failedToGetAccessToken(reason: "the access token is not a JWT (\(error.code))"))
        }
        guard jwt.userId == userId else {
            throw .auth(.failedToGetAccessToken(reason: "the access token belongs to another user"))
        }
        return jwt
    }

    /// An access token without any expiry is refreshed on every call rather than trusted forever.
    private func keep(_ token: JWT, expiry: Date?) {
        fresh = expiry.map { (token, $0.addingTimeInterval(-configuration.leeway)) }
    }

    private func expiry(of token: JWT, _ response: TokenResponse) -> Date? {
        token.expireDate ?? response.expiresIn.map { configuration.now().addingTimeInterval($0) }
    }

    // MARK: Logout

    /// Ends the session: revokes the refresh token at the issuer's revocation endpoint (RFC 7009, where
    /// the issuer offers one), forgets the tokens and zeroes the data key; `clearUser` also deletes the
    /// user's envelope and device secret.
    /// - Throws: ``VaultError`` `.auth(.revocationFailed)` when revocation failed (the network is down, the
    ///   issuer refused); local data is cleared all the same.
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
        guard let url = metadata.revocationEndpoint else { return }
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
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw .auth(.revocationFailed(reason: "could not reach \(error.host): \(error.reason)"))
        }
        guard response.status == 200 else {
            throw .auth(.revocationFailed(reason: "the revocation endpoint answered HTTP \(response.status)"))
        }
    }

    private func endSession() {
        if let inFlight = refreshInFlight {
            inFlight.task.cancel()
            refreshInFlight = nil
        }
        // Dropping the session drops the last reference to its data key, which zeroes it.
        session = nil
        fresh = nil
    }

    // MARK: OpenID Connect

    /// The first login: the authorization code flow with PKCE (S256), state and nonce.
    ///
    /// `presentAuthorizationURL` gets the URL to show (a CLI prints it or opens a browser). With a loopback
    /// redirect URI the answer comes back to a listener on 127.0.0.1 at a port chosen now (RFC 8252);
    /// otherwise pass the redirect to ``handleRedirect(url:)``. The tokens are kept in memory: call
    /// ``storeRefreshToken(withNewPassword:)`` to seal the refresh token under a password.
    /// - Returns: the user id (`sub`).
    /// - Throws: ``VaultError``: a state mismatch, an error answer or a missing code is `.auth(.openIDConnectFailed)`.
    public func performOpenIDConnectFlow(
        flow: Flow = .signIn,
        timeout: Duration = .seconds(300),
        presentAuthorizationURL: @escaping @Sendable (URL) async -> Void
    ) async throws(VaultError) -> String {
        let metadata = try await metadata()
        let pkce = PKCE()
        let state = Base64URL.encode(SecureRandom.bytes(count: 16))
        let nonce = Base64URL.encode(SecureRandom.bytes(count: 16))
        let configured = configuration.redirectURI

        let receiver: LoopbackRedirectReceiver?
        let redirectURI: URL
        if configured.scheme == "http", configured.isLoopback {
            do { receiver = try LoopbackRedirectReceiver() } catch { throw .auth(error) }
            redirectURI = receiver!.redirectURI(path: configured.path.isEmpty ? "/" : configured.path)
        } else {
            receiver = nil
            redirectURI = configured
        }
        defer { receiver?.stop() }

        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        var query = components.queryItems ?? []
        query += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: configuration.clientId),
            URLQueryItem(name: "redirect_uri", value: redirectURI.absoluteString),
            URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: pkce.method),
        ]
        if flow == .signUp { query.append(URLQueryItem(name: "prompt", value: "create")) }
        components.queryItems = query
        let authorizationURL = components.url!

        let presenter = Task { await presentAuthorizationURL(authorizationURL) }
        defer { presenter.cancel() }
        let redirect: URL
        if let receiver {
            do {
                redirect = try await withTaskCancellationHandler {
                    try await receiver.waitForRedirect(path: redirectURI.path, timeout: timeout)
                } onCancel: {
                    receiver.stop()
                }
            } catch let error as AuthError {
                throw .auth(error)
            } catch {
                throw .auth(.openIDConnectFailed(reason: "the login was cancelled"))
            }
        } else {
            redirect = await withCheckedContinuation { continuation in
                pendingRedirect = (redirectURI.absoluteString, continuation)
            }
        }

        let code = try Self.code(from: redirect, state: state)
        let endpoint = try await tokenEndpoint()
        let response: TokenResponse
        do {
            response = try await endpoint.exchange(
                code: code,
                verifier: pkce.verifier,
                redirectURI: redirectURI.absoluteString
            )
        } catch .refreshTokenExpired {
            throw .auth(.openIDConnectFailed(reason: "the issuer refused the authorization code (invalid_grant)"))
        } catch {
            throw .auth(error)
        }
        let userId = try userId(from: response, nonce: nonce)
        guard let refresh = response.refreshToken else { throw .auth(.failedToGetRefreshToken) }
        let accessToken = try accessJWT(response, userId: userId)
        endSession()
        session = Session(
            userId: userId,
            refreshToken: RefreshToken(token: refresh, userId: userId),
            vault: nil
        )
        keep(accessToken, expiry: expiry(of: accessToken, response))
        return userId
    }

    /// Passes an app's redirect to a waiting ``performOpenIDConnectFlow(flow:timeout:presentAuthorizationURL:)``.
    /// - Returns: whether a flow was waiting for this URL.
    public func handleRedirect(url: URL) -> Bool {
        guard let pending = pendingRedirect, url.absoluteString.hasPrefix(pending.prefix) else { return false }
        pendingRedirect = nil
        pending.continuation.resume(returning: url)
        return true
    }

    /// Seals the session's refresh token under a new password (a new key at the key service) and keeps the
    /// data key, so the session's later rotations are persisted too. Call it after the OpenID Connect flow.
    public func storeRefreshToken(withNewPassword password: String) async throws(VaultError) {
        guard let current = session else { throw .auth(.notLoggedIn) }
        let vault = try await userStorage.storeReturningSession(current.refreshToken, withNewPassword: password)
        if session?.id == current.id { session?.vault = vault }
    }

    static func code(from redirect: URL, state: String) throws(VaultError) -> String {
        let items = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard value("state") == state else {
            throw .auth(
                .openIDConnectFailed(reason: "the redirect's state does not match this login (possible forgery)")
            )
        }
        if let error = value("error") {
            let detail = value("error_description").map { ": \($0.prefix(200))" } ?? ""
            throw .auth(.openIDConnectFailed(reason: "the issuer answered \(error.prefix(64))\(detail)"))
        }
        guard let code = value("code"), !code.isEmpty else {
            throw .auth(.openIDConnectFailed(reason: "the redirect carries no authorization code"))
        }
        return code
    }

    private func userId(from response: TokenResponse, nonce: String) throws(VaultError) -> String {
        guard let idToken = response.idToken else {
            do { return try JWT(token: response.accessToken).userId } catch {
                throw .auth(
                    .failedToGetAccessToken(reason: "neither an id token nor a JWT access token names the user")
                )
            }
        }
        let jwt: JWT
        do { jwt = try JWT(token: idToken) } catch {
            throw .auth(.openIDConnectFailed(reason: "the id token does not decode (\(error.code))"))
        }
        guard jwt["nonce"] as String? == nonce else {
            throw .auth(.openIDConnectFailed(reason: "the id token's nonce does not match this login"))
        }
        return jwt.userId
    }

    // MARK: Discovery

    /// The issuer's metadata, fetched once and kept.
    public func metadata() async throws(VaultError) -> ProviderMetadata {
        if let metadataCache { return metadataCache }
        do {
            let metadata = try await Discovery(transport: transport, timeout: configuration.requestTimeout)
                .metadata(for: configuration.issuer)
            metadataCache = metadata
            return metadata
        } catch {
            throw .auth(error)
        }
    }

    private func tokenEndpoint() async throws(VaultError) -> TokenEndpoint {
        TokenEndpoint(
            url: try await metadata().tokenEndpoint,
            clientId: configuration.clientId,
            transport: transport,
            timeout: configuration.requestTimeout
        )
    }

    private func resolveUser(_ userId: String?) async throws(VaultError) -> String {
        if let userId { return userId }
        let users = try await userStorage.availableUserIds
        guard users.count == 1 else {
            if users.isEmpty { throw .storage(.noStoredRefreshToken(userId: "")) }
            throw .auth(.invalidConfiguration(reason: "\(users.count) users are stored; say which one"))
        }
        return users[0]
    }
}
