import Foundation
import Logging
import VaultCrypto

/// Password login, always-fresh access tokens, logout that revokes, and the first login by OpenID
/// Connect (THP's `THPAuth`).
///
/// A session begins with ``loginWithPassword(userId:password:storeNewRefreshToken:)``,
/// ``loginWithDeviceUnlock(userId:storeNewRefreshToken:)`` or
/// ``performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)`` (or,
/// without a browser here, ``performDeviceAuthorizationFlow(userId:scopes:maximumPolls:presentUserCode:)`` and
/// ``performOpenIDConnectFlowWithPastedRedirect(flow:userId:scopes:authorizationParameters:readPastedRedirect:)``).
/// It keeps the access token, the
/// refresh token and, after a password or device login, the user's unlocked envelope, so every rotated
/// refresh token is sealed and written before anyone sees the access token that came with it. The data
/// key is zeroed when the session ends.
///
/// The features live in extensions: password and device login (`Auth+PasswordLogin.swift`), OpenID
/// Connect (`Auth+OpenIDConnect.swift`), the device authorization grant (`Auth+DeviceAuthorization.swift`), logout
/// (`Auth+Logout.swift`).
public actor Auth {
    /// The timings of the last password login, for diagnostics and benchmarks (``LoginTimings``).
    @_spi(LoginTimings)
    public internal(set) var lastLoginTimings: LoginTimings?

    let configuration: VaultConfiguration
    let userStorage: UserStorage
    let transport: any HTTPTransport
    private var metadataCache: ProviderMetadata?
    private var keysCache: ProviderKeys?
    var session: ActiveSession?
    /// The session's access token and the monotonic instant it stops being handed out (``AccessTokenFreshness``),
    /// kept apart from the session so the hot path of ``getAccessToken(forceRefresh:)`` copies nothing else.
    private var fresh: (token: AccessToken, until: ContinuousClock.Instant)?
    private var refreshInFlight: (sessionId: UInt64, task: Task<Result<AccessToken, VaultError>, Never>)?
    var pendingRedirect: (id: UUID, redirectURI: String, continuation: CheckedContinuation<URL?, Never>)?
    /// Access tokens for one resource (``getAccessToken(resource:scopes:method:)``), apart from the session's own.
    var scopedTokens = ScopedTokenCache()
    /// The servers' newest DPoP nonces, for every proof this `Auth` makes (``dpopProofs(for:)``).
    let dpopNonces = DPoPNonces()

    /// An auth over `userStorage` (use ``Vault`` to build both from one configuration).
    ///
    /// The issuer is checked at the first call that needs it: an issuer that is neither https nor a loopback
    /// address fails that call with `.insecureURL`. Without a `transport`, ``DefaultHTTPTransport`` with the
    /// configuration's ``VaultConfiguration/trustRoots``.
    public init(
        configuration: VaultConfiguration,
        userStorage: UserStorage,
        transport: (any HTTPTransport)? = nil
    ) {
        self.configuration = configuration
        self.userStorage = userStorage
        self.transport = transport ?? DefaultHTTPTransport.make(trustRoots: configuration.trustRoots)
    }

    // MARK: State

    /// Whether a session is open.
    public var isLoggedIn: Bool { session != nil }

    /// The user of the open session.
    public var currentUserId: String? { session?.userId }

    /// The session's refresh token (a secret: never log it).
    public var refreshToken: RefreshToken? { session?.refreshToken }

    /// The session's context, as sealed with its refresh token: what the issuer sent beside the tokens (the
    /// granted `scope`, a SMART launch context, fields this library does not know) and what the app added
    /// (``addToSessionContext(_:)``). A refresh answer's fields replace stored ones; fields it omits stay. Empty
    /// without a session.
    public var sessionContext: [String: JSONValue] { session?.refreshToken.context ?? [:] }

    /// The login's latest id token: the one validated at its OpenID Connect login, or a newer one a refresh answer
    /// brought for the same user. Sealed with the refresh token, so a password or device login has it too; nil
    /// without a session or for a login without one (no `openid` scope, or stored by a version before the login
    /// context, until a refresh brings one; or when the sealed one no longer reads as a JWT). Personal data: never log
    /// it.
    public var idToken: JWT? { session?.refreshToken.idToken.flatMap { try? JWT(token: $0) } }

    /// How the user authenticated for this login (``LoginContext``: `acr`, `amr`, `auth_time` of its latest id
    /// token, and whether the `acr_values` asked for were met). Sealed with the refresh token, so it is here after a
    /// restart with a password or device login, without a new OpenID Connect login. Nil without a session, or when
    /// the login has no id token.
    public var loginContext: LoginContext? { session?.refreshToken.loginContext }

    /// Context names beginning with this are the app's: a token answer's field of such a name is dropped, so no
    /// server can overwrite what the app recorded with ``addToSessionContext(_:)`` (name your fields so).
    public static let appContextPrefix = "credential_vault"

    /// Lays `fields` over the session's context (a named field replaces the stored one) and, when the session keeps
    /// an unlocked envelope, seals the context anew with the stored refresh token before returning.
    /// - Throws: ``VaultError`` `.notLoggedIn` without a session; storage errors.
    public func addToSessionContext(_ fields: [String: JSONValue]) async throws(VaultError) {
        try await updateStoredLogin { $0.addingContext(fields) }
    }

    /// Applies `change` to the session's refresh token and, when the session keeps an unlocked envelope, to the one
    /// stored there (another process may have rotated it: the envelope is the truth), sealed before returning.
    /// - Returns: the changed token.
    @discardableResult
    func updateStoredLogin(_ change: (RefreshToken) -> RefreshToken) async throws(VaultError) -> RefreshToken {
        guard let current = session else { throw .notLoggedIn }
        guard let envelope = current.envelope else {
            let updated = change(current.refreshToken)
            session?.refreshToken = updated
            return updated
        }
        return try await userStorage.withSessionLock { (held) async throws(VaultError) in
            let (stored, onDisk) = try await userStorage.storedRefreshToken(in: envelope, under: held)
            let updated = change(stored)
            if updated != stored { try await userStorage.persist(updated, onto: onDisk, in: envelope, under: held) }
            if session?.id == current.id { session?.refreshToken = updated }
            return updated
        }
    }

    // MARK: Access tokens

    /// The session's access token while it stays valid for the leeway, otherwise a new one.
    ///
    /// Freshness is measured on the device's monotonic clock from when the token was asked for, for the lifetime the
    /// issuer stated (`expires_in`, or a JWT's `exp - iat`), so a wall clock set wrong neither refreshes at every call
    /// nor hands out an expired token. The leeway is ``VaultConfiguration/leeway``, at most a quarter of the lifetime.
    ///
    /// The token may be opaque or a JWT (``AccessToken/jwt``); either is handed out. Concurrent callers share one refresh. A rotated refresh token is written to the envelope before
    /// any caller gets the new access token, so a restart never strands the user. A store that cannot take the new
    /// envelope fails the call before the refresh is sent (the login is kept); with ``TerminationSignals`` installed,
    /// SIGINT, SIGTERM and SIGHUP wait until the envelope is on disk.
    ///
    /// THP's name (`THPAuth.getAccessToken(forceRefresh:)`), and the one verb for this operation in both modules:
    /// `CredentialVaultSMART`'s `FHIRAccess`, `SMARTClient` and `SMARTBackendClient` use it too.
    /// - Throws: ``VaultError``: `.notLoggedIn`; `isLoginExpired` ends the session.
    public func getAccessToken(forceRefresh: Bool = false) async throws(VaultError) -> AccessToken {
        if !forceRefresh, let fresh, configuration.monotonicNow() < fresh.until { return fresh.token }
        guard let current = session else { throw .notLoggedIn }
        if let inFlight = refreshInFlight, inFlight.sessionId == current.id {
            return try await inFlight.task.value.get()
        }
        let task = Task { await self.refreshSession(current.id) }
        refreshInFlight = (current.id, task)
        return try await task.value.get()
    }

    private func refreshSession(_ id: UInt64) async -> Result<AccessToken, VaultError> {
        defer { if refreshInFlight?.sessionId == id { refreshInFlight = nil } }
        do throws(VaultError) {
            guard let current = session, current.id == id else { throw .notLoggedIn }
            let redeemed = try await redeemForSession(current)
            keep(redeemed.accessToken, until: redeemed.freshUntil)
            return .success(redeemed.accessToken)
        } catch {
            if error.isLoginExpired, session?.id == id {
                configuration.logger.debug("the issuer refused the refresh token; the session ends")
                endSession()
            }
            return .failure(error)
        }
    }

    /// One refresh_token grant for the session `current` (with `extraFields`), under the session lock when it has an
    /// envelope and from the stored token (another process may have rotated it: the envelope is the truth). The
    /// session then holds the (possibly rotated) refresh token; context fields the app added while the answer was
    /// awaited (a session without an envelope keeps them in memory only) stay. Its access token is not touched.
    /// - Throws: ``VaultError``: `.notLoggedIn` when the session ended meanwhile; else what
    ///   ``redeem(_:sealingIn:onto:reserved:extraFields:under:)`` or ``redeem(_:extraFields:)`` throws.
    func redeemForSession(
        _ current: ActiveSession,
        extraFields: [String: String] = [:]
    ) async throws(VaultError) -> Redemption {
        guard let envelope = current.envelope else {
            let redeemed = try await redeem(current.refreshToken, extraFields: extraFields)
            return try keepRedeemed(redeemed, for: current)
        }
        return try await userStorage.withSessionLock { (held) async throws(VaultError) in
            let (refreshToken, onDisk) = try await userStorage.storedRefreshToken(in: envelope, under: held)
            let redeemed = try await redeem(
                refreshToken,
                sealingIn: envelope,
                onto: onDisk,
                extraFields: extraFields,
                under: held
            )
            return try keepRedeemed(redeemed, for: current)
        }
    }

    /// `redeemed` for the session `current`: its refresh token, with the context fields the app added meanwhile.
    /// - Throws: ``VaultError`` `.notLoggedIn` when the session ended meanwhile.
    private func keepRedeemed(_ redeemed: Redemption, for current: ActiveSession) throws(VaultError) -> Redemption {
        guard let now = session, now.id == current.id else { throw .notLoggedIn }
        let added = now.refreshToken.context.filter { current.refreshToken.context[$0.key] != $0.value }
        session?.refreshToken = redeemed.refreshToken.addingContext(added)
        return redeemed
    }

    /// One refresh_token grant; a rotated refresh token is sealed into `envelope` before returning.
    ///
    /// Under the session lock (`held`). The envelope on disk is read and checked before the request
    /// (`onto`, when the caller already has it), and the space of the new one is reserved, so that between the answer
    /// and the fsync there is only sealing and a write that needs no new block: a store that cannot take the new
    /// envelope fails before anything is sent. From the request to the fsync SIGINT, SIGTERM and SIGHUP are held
    /// (``TerminationSignals``): a process killed with SIGKILL in that window is the only way to lose a rotated token.
    /// A password login's unlock reserved the space already (`reserved`, its failure thrown here, where the
    /// reservation's own would be).
    func redeem(
        _ refreshToken: RefreshToken,
        sealingIn envelope: UnlockedEnvelope,
        onto onDisk: Envelope? = nil,
        reserved: Result<StoreReservation, VaultError>? = nil,
        extraFields: [String: String] = [:],
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> Redemption {
        let prepared: Envelope
        if let onDisk {
            prepared = onDisk
        } else {
            prepared = try await userStorage.verifiedEnvelope(in: envelope, under: held)
        }
        let reservation: StoreReservation
        if let reserved {
            reservation = try reserved.get()
        } else {
            reservation = try await userStorage.reserveEnvelopeSpace()
        }
        return try await redeem(refreshToken, extraFields: extraFields, sealing: true) {
            (updated) async throws(VaultError) in
            try await userStorage.persist(updated, onto: prepared, in: envelope, reservation: reservation, under: held)
        }
    }

    /// One refresh_token grant whose rotated refresh token is kept in memory only (a session without an envelope);
    /// no session lock is needed.
    func redeem(
        _ refreshToken: RefreshToken,
        extraFields: [String: String] = [:]
    ) async throws(VaultError) -> Redemption {
        try await redeem(refreshToken, extraFields: extraFields, sealing: false) { (_) async throws(VaultError) in }
    }

    /// The grant both ``redeem(_:sealingIn:onto:reserved:extraFields:under:)`` and ``redeem(_:extraFields:)`` send:
    /// `seal` writes a changed refresh token (`sealing` says whether it writes anything, for the log) inside the
    /// window of held signals, before the access token is handed out.
    private func redeem(
        _ refreshToken: RefreshToken,
        extraFields: [String: String],
        sealing: Bool,
        seal: (RefreshToken) async throws(VaultError) -> Void
    ) async throws(VaultError) -> Redemption {
        let clock = ContinuousClock()
        let requestedAt = configuration.monotonicNow()
        let started = clock.now
        let (response, updated, answered) = try await TerminationSignals.holding {
            () async throws(VaultError) -> (TokenResponse, RefreshToken, ContinuousClock.Instant) in
            let (response, client) = try await refreshGrant(refreshToken, extraFields: extraFields)
            let answered = clock.now
            // A rotated token replaces the old one; context fields the answer names replace the stored ones, and
            // those it omits stay (a SMART refresh may leave the launch context out).
            // An answer for one resource (`extraFields`) speaks for that token only: its context is not the login's.
            var updated = (response.refreshToken.map { refreshToken.replacingToken($0) } ?? refreshToken)
                .addingContext(extraFields.isEmpty ? response.context : [:])
            if let client { updated = updated.replacingClient(client) }
            if extraFields.isEmpty, let idToken = response.idToken {
                updated = await keepingIDToken(idToken, of: updated)
            }
            if updated != refreshToken { try await seal(updated) }
            return (response, updated, answered)
        }
        configuration.logger.debug(
            "refresh_token grant answered",
            metadata: [
                "rotated": "\(updated.token != refreshToken.token)",
                "contextChanged": "\(updated.context != refreshToken.context)",
                "idTokenRenewed": "\(updated.idToken != refreshToken.idToken)",
                "sealed": "\(sealing)",
            ]
        )
        let token = accessToken(response, userId: refreshToken.userId)
        return Redemption(
            accessToken: token,
            freshUntil: freshUntil(token, response, requestedAt: requestedAt),
            refreshToken: updated,
            tokenEndpointTime: answered - started,
            persistTime: clock.now - answered
        )
    }

    /// `token` with `idToken`, a refresh answer's, as the login's latest id token and its ``LoginContext``, when it
    /// speaks of the same login (OpenID Connect Core 1.0 section 12.2: the same `iss` and `sub`, this client in
    /// `aud`); otherwise `token` as it was. Its signature is not checked: it came straight from the token endpoint
    /// over TLS (section 3.1.3.7 item 6), and it only replaces the hint and the context, never the user.
    private func keepingIDToken(_ idToken: String, of token: RefreshToken) async -> RefreshToken {
        let clientId = token.client?.clientId ?? configuration.clientId
        guard let jwt = try? JWT(token: idToken),
            let issuer = try? await metadata().issuerIdentifier,
            jwt.issuer == issuer, jwt.userId == token.userId, jwt.audience.contains(clientId)
        else {
            configuration.logger.debug("the refresh answer's id token is not of this login; the login's is kept")
            return token
        }
        let requested = token.loginContext?.requestedACRValues ?? []
        return token.replacingIDToken(idToken, context: LoginContext(idToken: jwt, requestedACRValues: requested))
    }

    /// One refresh_token grant with the login's client. A registered client with a new key waiting signs with it
    /// first: accepted, the new key alone signs from now on (the returned registration); refused (HTTP 400 or 401, or
    /// a bare refusal that reads as a dead login), the grant is sent once more signed with the old key, which the
    /// server still lists.
    private func refreshGrant(
        _ refreshToken: RefreshToken,
        extraFields: [String: String] = [:]
    ) async throws(VaultError) -> (TokenResponse, ClientRegistration?) {
        guard let registration = refreshToken.client, registration.hasPendingKey else {
            let endpoint = try await tokenEndpoint(for: refreshToken.client, dpop: refreshToken.dpopKey)
            return (try await endpoint.refresh(refreshToken.token, extraFields: extraFields), nil)
        }
        do {
            let response = try await tokenEndpoint(for: registration, pendingKey: true, dpop: refreshToken.dpopKey)
                .refresh(refreshToken.token, extraFields: extraFields)
            configuration.logger.debug("the issuer accepted the client's new key; the old one is dropped")
            return (response, registration.promotingPendingKey())
        } catch {
            // A bare 400 or 401 reads as a dead login; the old key's request tells which it is.
            guard error.httpStatus == 400 || error.httpStatus == 401 || error.isLoginExpired else { throw error }
            configuration.logger.debug("the issuer refused the client's new key; signing with the old one")
            let endpoint = try await tokenEndpoint(for: registration, dpop: refreshToken.dpopKey)
            return (try await endpoint.refresh(refreshToken.token, extraFields: extraFields), nil)
        }
    }

    /// The answer's access token, opaque or not, for `userId`: the access token is the resource server's to
    /// read, so nothing in it is checked against the user.
    func accessToken(_ response: TokenResponse, userId: String) -> AccessToken {
        AccessToken(
            token: response.accessToken,
            userId: userId,
            expiresIn: response.expiresIn,
            now: configuration.now(),
            tokenType: response.context["token_type"]?.stringValue
        )
    }

    /// When `token`, from `response` to a request sent at `requestedAt`, stops being handed out
    /// (``AccessTokenFreshness``).
    func freshUntil(
        _ token: AccessToken,
        _ response: TokenResponse,
        requestedAt: ContinuousClock.Instant
    ) -> ContinuousClock.Instant? {
        AccessTokenFreshness.freshUntil(
            token,
            expiresIn: response.expiresIn,
            requestedAt: requestedAt,
            wallClock: configuration.now(),
            leeway: configuration.leeway
        )
    }

    /// An access token without any expiry (`until` nil) is refreshed on every call rather than trusted forever.
    func keep(_ token: AccessToken, until: ContinuousClock.Instant?) {
        fresh = until.map { (token, $0) }
    }

    /// Forgets the session: cancels its refresh, drops its tokens and its data key (which zeroes it).
    func endSession() {
        if let inFlight = refreshInFlight {
            inFlight.task.cancel()
            refreshInFlight = nil
        }
        session = nil
        fresh = nil
        scopedTokens.removeAll()
    }

    // MARK: Discovery

    /// The issuer's metadata: the configuration's ``VaultConfiguration/providerMetadata`` when set (discovered
    /// elsewhere, as SMART on FHIR does), else OpenID Connect discovery, fetched once and kept.
    /// - Throws: ``VaultError``: `.insecureURL` for an issuer that is neither https nor a loopback address,
    ///   `isConfigurationError` when discovery fails, `isNetworkError` when the issuer cannot be reached.
    public func metadata() async throws(VaultError) -> ProviderMetadata {
        if let metadataCache { return metadataCache }
        try Self.checkIssuer(configuration.issuer)
        if let discovered = configuration.providerMetadata {
            metadataCache = discovered
            return discovered
        }
        let metadata = try await Discovery(
            transport: transport,
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
        .metadata(for: configuration.issuer)
        configuration.logger.debug("discovered the issuer's endpoints", metadata: ["issuer": "\(metadata.issuer)"])
        metadataCache = metadata
        return metadata
    }

    /// The issuer's signing keys, kept for the life of this `Auth`.
    /// - Throws: ``VaultError`` `.openIDConnectFailed` when discovery names no `jwks_uri`.
    func providerKeys() async throws(VaultError) -> ProviderKeys {
        if let keysCache { return keysCache }
        guard let url = try await metadata().jwksURI else {
            throw .openIDConnectFailed(
                "the issuer's discovery document names no jwks_uri, so its id token cannot be checked"
            )
        }
        let keys = ProviderKeys(
            url: url,
            transport: transport,
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
        keysCache = keys
        return keys
    }

    /// Refuses an issuer the library must not send secrets to.
    static func checkIssuer(_ issuer: URL) throws(VaultError) {
        guard issuer.isSecureOrLoopback else { throw .insecureURL(issuer, role: "the issuer", origin: .issuer) }
    }

    /// The token endpoint, for the client `registration` (the configured client when nil); with `dpop`, every
    /// request carries a proof signed by that key.
    func tokenEndpoint(
        for registration: ClientRegistration?,
        pendingKey: Bool = false,
        dpop: DPoPKey? = nil
    ) async throws(VaultError) -> TokenEndpoint {
        let metadata = try await metadata()
        var endpoint = try await authenticated(
            metadata.tokenEndpoint,
            methods: metadata.tokenEndpointAuthMethods,
            as: registration,
            pendingKey: pendingKey
        )
        endpoint.dpop = dpop.map(dpopProofs(for:))
        return TokenEndpoint(endpoint: endpoint)
    }

    /// `url` as an endpoint the client authenticates at: the client this library registered for the login
    /// (`registration`), else the configured client id and authentication.
    /// - Throws: ``VaultError`` `.invalidConfiguration` when neither names a client.
    func authenticated(
        _ url: URL,
        methods: [String]?,
        as registration: ClientRegistration?,
        pendingKey: Bool = false
    ) async throws(VaultError) -> AuthenticatedEndpoint {
        let metadata = try await metadata()
        let clientId: String
        let authentication: ClientAuthentication
        if let registration {
            clientId = registration.clientId
            authentication = try registration.authentication(pending: pendingKey)
        } else {
            guard !configuration.clientId.isEmpty else {
                throw .invalidConfiguration(
                    "no client id is configured and the stored login holds no registered client: configure the "
                        + "client id this login was made with"
                )
            }
            clientId = configuration.clientId
            authentication = configuration.clientAuthentication
        }
        return AuthenticatedEndpoint(
            url: url,
            clientId: clientId,
            authentication: authentication,
            supportedMethods: methods,
            audiences: AssertionAudiences(
                tokenEndpoint: metadata.tokenEndpoint,
                issuer: metadata.issuerIdentifier ?? metadata.issuer.absoluteString,
                signingAlgorithms: metadata.tokenEndpointAuthSigningAlgorithms
            ),
            now: configuration.now,
            transport: transport,
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
    }

    func resolveUser(_ userId: String?) async throws(VaultError) -> String {
        if let userId { return userId }
        return try await userStorage.soleUser().userId
    }
}
