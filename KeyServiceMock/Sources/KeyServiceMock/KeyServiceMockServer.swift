public import Foundation
import Hummingbird
import HummingbirdTLS
import KeyServiceCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import VaultPOSIX

/// A key service (TIM KeyService v1) and an OpenID Connect provider on one HTTP listener.
///
/// ```swift
/// try await KeyServiceMockServer.withServer { server in
///     let keyService = server.keyServiceURL   // http://127.0.0.1:PORT/auth/realms/demo/keyservice/v1
///     // ... talk to it over HTTP ...
/// }
/// ```
///
/// Start it in-process on port 0 in a test (``withServer(_:isolation:_:)`` stops it when the scope
/// ends; ``start(_:)`` and ``stop()`` when a scope does not fit), or run the `keyservice-mock` executable.
public final class KeyServiceMockServer: Sendable {
    /// `http://HOST:PORT` (`https` with ``KeyServiceMockConfiguration/tls``), with the port actually bound.
    public let baseURL: URL
    /// `{baseURL}/auth/realms/{realm}`: the OpenID Connect issuer.
    public let issuer: URL
    /// The faults a test can switch on.
    public let faults: FaultInjection
    /// The `acr` and `amr` of the id tokens issued, as a test sets them, and the last id token issued.
    public let authentication: MockAuthentication
    private let state: StateStore
    private let smartStore: SMARTStore
    private let tokenRequestCounts: TokenRequestCounts
    private let registry: ClientRegistry
    private let keyService: KeyService
    private let task: Task<Void, any Error>
    /// Runs the application; ``stop()`` and, when configured, SIGINT and SIGTERM shut it down gracefully.
    private let serviceGroup: ServiceGroup

    /// `{issuer}/keyservice/v1`: `createkey` and `key` are below it.
    public var keyServiceURL: URL {
        issuer.appendingPathComponent(Layout.keyService)
    }

    /// `{issuer}/keyservice/v2`: protocol 2's `createkey`, `enroll`, `evaluate`, `confirm` and `key` are below it.
    public var keyServiceV2URL: URL {
        issuer.appendingPathComponent(Layout.keyServiceV2)
    }

    /// `{baseURL}/fhir/r4`, without a trailing slash: the FHIR base of the SMART mode
    /// (``KeyServiceMockConfiguration/smart``), and the `aud` its authorization endpoint requires.
    ///
    /// Nothing answers below it unless the SMART mode is on.
    public var fhirBase: URL {
        baseURL.appendingPathComponent(String(Layout.fhirBase.dropFirst()))
    }

    /// Creates an EHR launch for `patient` (and `encounter`) and returns its opaque `launch` id.
    ///
    /// The EHR passes the id to the app with `iss` = ``fhirBase``; the app sends it back as the `launch`
    /// parameter of its authorization request, which then gets this context (and the token response
    /// `intent`). An id works for one authorization; it is kept in memory only. Useful only in the SMART mode.
    public func createEHRLaunch(patient: String, encounter: String? = nil) -> String {
        smartStore.createLaunch(patient: patient, encounter: encounter)
    }

    /// How many token-endpoint requests with `grant_type` = `grantType` were answered so far, taken or refused.
    ///
    /// A test of a client that caches its token shows with it that the cached token caused no new request:
    /// `tokenRequests(grantType: "client_credentials")` stays where it was. Requests without a `grant_type`, and
    /// those an injected fault stopped before the endpoint, are not counted; nor are `grant_type` values beyond the
    /// first 64 distinct ones seen.
    public func tokenRequests(grantType: String) -> Int {
        tokenRequestCounts.requests(grantType: grantType)
    }

    /// `{issuer}/clients-registrations/openid-connect`: the OAuth 2.0 Dynamic Client Registration endpoint
    /// (RFC 7591) of ``KeyServiceMockConfiguration/dynamicRegistration``.
    ///
    /// A registered client's configuration endpoint (RFC 7592, its `registration_client_uri`) is
    /// `{registrationEndpoint}/{client_id}`. Nothing answers here unless dynamic registration is on.
    public var registrationEndpoint: URL {
        issuer.appendingPathComponent(Layout.registration)
    }

    /// How many clients registered successfully so far (answers 201 of the registration endpoint).
    public var registrationRequests: Int {
        registry.registrationCount
    }

    /// The client registered with `clientId`, as it is now (after any RFC 7592 update); `nil` when there is
    /// none, or it was deleted.
    public func registeredClient(_ clientId: String) -> RegisteredClient? {
        registry.registration(clientId)?.client
    }

    /// How many token-endpoint requests named the registered client `clientId` (by HTTP Basic, `client_id` or an
    /// assertion's `iss`) while it was registered, taken or refused.
    public func tokenRequests(clientId: String) -> Int {
        registry.tokenRequestCount(of: clientId)
    }

    /// How many wrong secrets in a row the key service has counted against `keyId` (a right one resets it;
    /// the third locks the key); nil when no such key exists or the state cannot be read.
    ///
    /// A client test shows with it that a failure of the network or of the server was never counted as a wrong
    /// password. Read through the key storage's write queue, after every attempt answered so far (an attempt is
    /// counted, checked and reset in one step, so never between an attempt's count and its check).
    public func failedAttempts(keyId: String) async -> Int? {
        (try? await keyService.failures(keyId: keyId)) ?? nil
    }

    private init(
        baseURL: URL,
        issuer: URL,
        faults: FaultInjection,
        authentication: MockAuthentication,
        state: StateStore,
        smartStore: SMARTStore,
        tokenRequestCounts: TokenRequestCounts,
        registry: ClientRegistry,
        keyService: KeyService,
        task: Task<Void, any Error>,
        serviceGroup: ServiceGroup
    ) {
        self.baseURL = baseURL
        self.issuer = issuer
        self.faults = faults
        self.authentication = authentication
        self.state = state
        self.smartStore = smartStore
        self.tokenRequestCounts = tokenRequestCounts
        self.registry = registry
        self.keyService = keyService
        self.task = task
        self.serviceGroup = serviceGroup
    }

    /// Opens the state, binds the listener and returns once requests are being served.
    ///
    /// Call ``stop()`` when done, or use ``withServer(_:isolation:_:)``, which does.
    /// - Throws: ``KeyServiceMockError`` when the configuration is unusable (a host that is not loopback,
    ///   unless ``KeyServiceMockConfiguration/allowsNonLoopbackHost`` is set), the state directory is not
    ///   0700 and this user's, is damaged (a pepper or signing key missing or unreadable) or in use by another
    ///   server, a SMART backend client's JWK Set is unusable (``RegisteredBackendClient/jwks``), or the address
    ///   cannot be bound.
    public static func start(
        _ configuration: KeyServiceMockConfiguration = .init()
    ) async throws -> KeyServiceMockServer {
        try validate(configuration)
        let state: StateStore
        do {
            state = try StateStore.open(directory: configuration.stateDirectory)
        } catch {
            throw KeyServiceMockError("cannot open the state: \(error)")
        }
        do {
            return try await start(configuration, state: state)
        } catch let error as KeyServiceMockError {
            state.close()
            throw error
        } catch {
            state.close()
            throw KeyServiceMockError("cannot start: \(error)")
        }
    }

    private static func start(
        _ configuration: KeyServiceMockConfiguration,
        state: StateStore
    ) async throws -> KeyServiceMockServer {
        let layout = Layout(realm: configuration.realm)
        let address = ServerAddress()
        let smartStore = SMARTStore(state: state)
        let tokenRequestCounts = TokenRequestCounts()
        let registry = ClientRegistry(state: state)
        let authentication = MockAuthentication()
        let provider = IdentityProvider(
            configuration: configuration,
            signer: try TokenSigner(state: state),
            sessions: try SessionStore(state: state),
            address: address,
            smartStore: smartStore,
            backendServices: try BackendServices(
                configuration.smart?.backendClients ?? [],
                rules: configuration.smart?.clientAssertions ?? ClientAssertionRules()
            ),
            tokenRequests: tokenRequestCounts,
            registry: registry,
            dpop: configuration.dpop.map { DPoPVerifier(mode: $0) },
            authentication: authentication
        )
        // The key table lives in the state's SQLite file, beside the identity provider's tables.
        let keyService = KeyService(
            storage: try SQLiteKeyStorage(database: state.database, logger: configuration.logger),
            peppers: try PepperSet(single: state.pepper),
            limits: KeyLimits(perClient: configuration.maximumKeysPerClient, total: configuration.maximumKeys),
            now: configuration.now
        )
        let faults = FaultInjection()

        let router = Router(context: MockRequestContext.self)
        // Outermost first: every request is logged, then meets its fault, and only what passes the
        // faults reaches a route, whose unexpected errors become the JSON 500.
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: FaultMiddleware(faults: faults, layout: layout))
        router.add(middleware: ServerErrorMiddleware())
        let keyServiceRoutes = KeyServiceRoutes(service: keyService)
        keyServiceRoutes.add(to: router, basePath: layout.path(Layout.keyService))
        keyServiceRoutes.addProtocolV2(to: router, basePath: layout.path(Layout.keyServiceV2))
        OpenIDRoutes(provider: provider).add(to: router, layout: layout)
        if configuration.dynamicRegistration {
            RegistrationRoutes(provider: provider).add(to: router, layout: layout)
        }
        if let smart = configuration.smart {
            SMARTRoutes(provider: provider, mode: smart).add(to: router, layout: layout)
            FHIRRoutes(provider: provider, mode: smart).add(to: router)
        }

        let logger = configuration.logger
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            server: try configuration.tls.map { try .tls(tlsConfiguration: $0.tlsConfiguration) } ?? .http1(),
            // A burst of a thousand simultaneous connections (a lockout test's) waits in the accept queue
            // instead of overflowing Hummingbird's default of 256, which resets connections under load.
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), backlog: 1_024),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? configuration.port)
                portContinuation.finish()
            },
            logger: logger
        )
        // stop() shuts the group down gracefully (idle keep-alive connections close, requests in
        // flight finish) rather than cancelling it, which Hummingbird would log as errors.
        let serviceGroup = ServiceGroup(
            configuration: .init(
                services: [application],
                gracefulShutdownSignals: configuration.stopsOnTerminationSignals ? [.sigterm, .sigint] : [],
                logger: logger
            )
        )
        let task = Task {
            defer { portContinuation.finish() }
            try await serviceGroup.run()
        }
        var boundPort: Int?
        for await port in ports {
            boundPort = port
        }
        guard let boundPort else {
            do {
                try await task.value
            } catch {
                throw KeyServiceMockError("cannot listen on \(configuration.host):\(configuration.port): \(error)")
            }
            throw KeyServiceMockError("the server stopped before it listened")
        }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let scheme = configuration.tls == nil ? "http" : "https"
        guard let baseURL = URL(string: "\(scheme)://\(host):\(boundPort)"),
            let issuer = URL(string: baseURL.absoluteString + layout.issuerPath)
        else {
            await serviceGroup.triggerGracefulShutdown()
            _ = try? await task.value
            throw KeyServiceMockError("the host \(configuration.host) does not make a URL")
        }
        address.issuer = issuer.absoluteString
        address.baseURL = baseURL.absoluteString
        if !Loopback.isAddress(configuration.host) {
            logger.warning(
                "listening on an address that is not loopback: anyone who reaches it can create keys and guess secrets",
                metadata: ["address": "\(baseURL.absoluteString)"]
            )
        }
        return KeyServiceMockServer(
            baseURL: baseURL,
            issuer: issuer,
            faults: faults,
            authentication: authentication,
            state: state,
            smartStore: smartStore,
            tokenRequestCounts: tokenRequestCounts,
            registry: registry,
            keyService: keyService,
            task: task,
            serviceGroup: serviceGroup
        )
    }

    private static func validate(_ configuration: KeyServiceMockConfiguration) throws {
        // Unreserved characters only, so the realm goes into the issuer's path as it is.
        guard !configuration.realm.isEmpty,
            configuration.realm.unicodeScalars.allSatisfy(PercentEncoding.unreserved.contains)
        else {
            throw KeyServiceMockError("the realm must be letters, digits, '-', '.', '_' or '~'")
        }
        guard (0...65_535).contains(configuration.port) else {
            throw KeyServiceMockError("the port must be 0 to 65535")
        }
        guard configuration.allowsNonLoopbackHost || Loopback.isAddress(configuration.host) else {
            throw KeyServiceMockError(
                "the host \(configuration.host) is not a loopback address (127.0.0.0/8 or ::1): a mock key service "
                    + "is for tests and demos, and anyone who reaches it can create keys and guess secrets. "
                    + "Set allowsNonLoopbackHost (keyservice-mock --allow-non-loopback) to listen there anyway"
            )
        }
        guard configuration.maximumKeysPerClient > 0, configuration.maximumKeys > 0 else {
            throw KeyServiceMockError("the key limits must be positive numbers")
        }
        for lifetime in [
            configuration.accessTokenLifetime, configuration.idTokenLifetime, configuration.refreshTokenLifetime,
        ] where !(lifetime > 0 && lifetime < 100 * 365 * 86_400) {
            throw KeyServiceMockError("token lifetimes must be positive numbers of seconds")
        }
        if let smart = configuration.smart {
            guard (1...100_000).contains(smart.patientCount) else {
                throw KeyServiceMockError("the SMART mode's patientCount must be 1 to 100000")
            }
            guard !smart.defaultPatient.isEmpty, !smart.defaultEncounter.isEmpty else {
                throw KeyServiceMockError("the SMART mode's defaultPatient and defaultEncounter must not be empty")
            }
            // Read here too, so that a bad JWK Set is refused before the state is opened.
            _ = try BackendServices(smart.backendClients)
            guard !smart.clientAssertions.accepted.isEmpty else {
                throw KeyServiceMockError(
                    "the SMART mode's clientAssertions.algorithms must name one of \(BackendServices.algorithms)"
                )
            }
        }
    }

    /// Stops listening, lets requests in flight finish, closes idle connections and the state.
    /// Calling it again does nothing.
    public func stop() async {
        await serviceGroup.triggerGracefulShutdown()
        _ = try? await task.value
        state.close()
    }

    /// Waits until the server stops: after ``stop()``, or on SIGINT/SIGTERM when
    /// ``KeyServiceMockConfiguration/stopsOnTerminationSignals`` is set; then closes the state.
    /// - Throws: the error that ended the server, if one did; a cancellation counts as a clean stop.
    public func waitUntilStopped() async throws {
        defer { state.close() }
        do {
            try await task.value
        } catch is CancellationError {
            return
        }
    }
}
