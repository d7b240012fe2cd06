public import CredentialVault
public import Foundation
public import Logging

/// A SMART Backend Services client (SMART App Launch 2.2, "Backend Services"): a service with no user, no password
/// and no refresh token, authenticating at the token endpoint with a `client_assertion` its private key signs (RS384
/// or ES384, `iss` = `sub` = the client id, `aud` the token endpoint, a minute to live, a fresh `jti`, `kid` in the
/// header) and asking for `system/` scopes with the `client_credentials` grant.
///
/// The access token is kept in memory until it has less than the leeway left (measured on the monotonic clock, as
/// ``Auth`` does), and then fetched again, with one request for any number of concurrent callers. FHIR requests come from ``FHIRAccess``.
public actor SMARTBackendClient: FHIRAccess {
    /// The FHIR server.
    public nonisolated let fhirBase: URL
    /// The client id the server registered the service's key under.
    public nonisolated let clientId: String
    /// The scopes asked for, such as `system/*.rs`.
    public nonisolated let scopes: [String]
    /// The service's private key (``ClientAuthentication/publicJWKS`` is what the server needs to know).
    public nonisolated let authentication: ClientAuthentication
    /// How requests are sent.
    public nonisolated let fhirConnection: FHIRConnection
    private let leeway: TimeInterval
    private let now: @Sendable () -> Date
    private let monotonicNow: @Sendable () -> ContinuousClock.Instant
    private var discovered: SMARTConfiguration?
    private var kept: (token: AccessToken, scope: String?, until: ContinuousClock.Instant)?
    private var inFlight: Task<Result<Fetched, VaultError>, Never>?

    /// One `client_credentials` answer: the token, the granted scope, and when the token stops being handed out.
    private struct Fetched: Sendable {
        let token: AccessToken
        let scope: String?
        let until: ContinuousClock.Instant?
    }

    /// A backend service of the FHIR server at `fhirBase`.
    /// - Parameters:
    ///   - fhirBase: the FHIR server's base URL: https, or http to a loopback address.
    ///   - clientId: the client id the server registered the service under.
    ///   - privateKeyPEM: an RSA key (2048 bits or more: RS384) or a P-384 key (ES384) in PEM; a P-256 key signs ES256.
    ///   - keyId: the `kid` the server knows the key's public half by.
    ///   - scopes: `system/` scopes, such as `system/*.rs` or `system/Patient.rs`.
    ///   - leeway: a token with less than this left (seconds), or less than a quarter of its lifetime, is fetched
    ///     again.
    ///   - requestTimeout: seconds to wait for any one HTTP answer.
    ///   - now: the wall clock, for the assertions' times and a JWT token's `exp`; tests pass their own.
    ///   - monotonicNow: the monotonic clock tokens are timed on (``VaultConfiguration/monotonicNow``); tests pass
    ///     their own.
    ///   - logger: requests and decisions at debug level; never a secret.
    ///   - transport: how requests are sent; ``DefaultHTTPTransport`` by default.
    /// - Throws: ``VaultError`` `isConfigurationError`: an insecure FHIR base, a key that is not one of these, a scope
    ///   that is not a `system/` scope.
    public init(
        fhirBase: URL,
        clientId: String,
        privateKeyPEM: String,
        keyId: String,
        scopes: [String],
        leeway: TimeInterval = VaultConfiguration.defaultLeeway,
        requestTimeout: TimeInterval = VaultConfiguration.defaultRequestTimeout,
        now: @escaping @Sendable () -> Date = { Date() },
        monotonicNow: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        logger: Logger = Logger(label: "credential-vault"),
        transport: any HTTPTransport = DefaultHTTPTransport.make()
    ) throws(VaultError) {
        try FHIRConnection.check(fhirBase: fhirBase)
        let patientOrUser = scopes.compactMap(SMARTScope.init).filter { $0.context != .system }
        guard patientOrUser.isEmpty, !scopes.isEmpty else {
            throw .invalidConfiguration(
                "a backend service asks for system/ scopes only (such as system/*.rs); got "
                    + "\(VaultError.printable(scopes.joined(separator: " "), limit: 200))"
            )
        }
        // SMART servers SHALL accept RS384 and ES384: an RSA key signs RS384 here, not RS256; an EC key its own
        // algorithm, pinned so that its published JWK names it.
        if let rs384 = try? ClientAuthentication.privateKeyJWT(pem: privateKeyPEM, keyId: keyId, algorithm: "RS384") {
            authentication = rs384
        } else if let es384 = try? ClientAuthentication.privateKeyJWT(
            pem: privateKeyPEM,
            keyId: keyId,
            algorithm: "ES384"
        ) {
            authentication = es384
        } else {
            authentication = try ClientAuthentication.privateKeyJWT(
                pem: privateKeyPEM,
                keyId: keyId,
                algorithm: "ES256"
            )
        }
        self.fhirBase = fhirBase
        self.clientId = clientId
        self.scopes = scopes
        self.leeway = leeway
        self.now = now
        self.monotonicNow = monotonicNow
        fhirConnection = FHIRConnection(transport: transport, timeout: requestTimeout, logger: logger)
    }

    /// The server's SMART configuration, discovered once and kept.
    @discardableResult
    public func ready() async throws(VaultError) -> SMARTConfiguration {
        if let discovered { return discovered }
        let smart = try await SMARTDiscovery(
            transport: fhirConnection.transport,
            timeout: fhirConnection.timeout,
            logger: fhirConnection.logger
        )
        .configuration(for: fhirBase)
        discovered = smart
        return smart
    }

    /// The scope the server granted with the current access token, exactly as granted; nil before the first.
    public var grantedScope: SMARTScopes? { kept?.scope.map(SMARTScopes.init) }

    /// The access token while it has more than the leeway left, otherwise a new one from the `client_credentials`
    /// grant; concurrent callers share one request.
    /// - Throws: ``VaultError``: `.serverRefused` with the server's OAuth error (`invalid_client` for a refused
    ///   assertion), `isNetworkError`, discovery errors.
    public func getAccessToken(forceRefresh: Bool = false) async throws(VaultError) -> AccessToken {
        if !forceRefresh, let kept, monotonicNow() < kept.until { return kept.token }
        if let inFlight { return try await inFlight.value.get().token }
        let task = Task { await self.fetch() }
        inFlight = task
        let result = await task.value
        inFlight = nil
        let fetched = try result.get()
        // A token without any expiry is fetched again at every use rather than trusted forever.
        kept = fetched.until.map { (fetched.token, fetched.scope, $0) }
        return fetched.token
    }

    private func fetch() async -> Result<Fetched, VaultError> {
        do throws(VaultError) {
            let smart = try await ready()
            let endpoint = TokenEndpoint(
                url: smart.tokenEndpoint,
                clientId: clientId,
                authentication: authentication,
                supportedMethods: smart.tokenEndpointAuthMethods,
                now: now,
                transport: fhirConnection.transport,
                timeout: fhirConnection.timeout,
                logger: fhirConnection.logger
            )
            let scope = scopes.joined(separator: " ")
            let requestedAt = monotonicNow()
            let response: TokenResponse
            do {
                response = try await endpoint.clientCredentials(scope: scope)
            } catch {
                // A refused assertion (a replayed jti, a clock a little off) is tried once more with a new one.
                guard error.kind == .serverRefused, error.httpStatus == 400 || error.httpStatus == 401 else {
                    throw error
                }
                fhirConnection.logger.debug("the token endpoint refused the assertion; trying once with a new one")
                response = try await endpoint.clientCredentials(scope: scope)
            }
            fhirConnection.logger.debug("the client_credentials grant answered")
            let token = AccessToken(
                token: response.accessToken,
                userId: clientId,
                expiresIn: response.expiresIn,
                now: now()
            )
            let until = AccessTokenFreshness.freshUntil(
                token,
                expiresIn: response.expiresIn,
                requestedAt: requestedAt,
                wallClock: now(),
                leeway: leeway
            )
            return .success(Fetched(token: token, scope: response.context["scope"]?.stringValue, until: until))
        } catch {
            return .failure(error)
        }
    }
}
