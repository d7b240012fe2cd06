import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A key service (TIM KeyService v1) and an OpenID Connect provider on one HTTP listener.
///
/// ```swift
/// let server = try await KeyServiceMockServer.start()
/// let keyService = server.keyServiceURL   // http://127.0.0.1:PORT/auth/realms/demo/keyservice/v1
/// // ... talk to it over HTTP ...
/// await server.stop()
/// ```
///
/// Start it in-process on port 0 in a test, or run the `keyservice-mock` executable.
public final class KeyServiceMockServer: Sendable {
    /// `http://HOST:PORT`, with the port actually bound.
    public let baseURL: URL
    /// The faults a test can switch on.
    public let faults: FaultInjection
    private let realm: String
    private let state: StateStore
    private let task: Task<Void, any Error>
    /// The group whose graceful shutdown ``stop()`` triggers; `nil` when the process's signals do that.
    private let serviceGroup: ServiceGroup?

    /// `{baseURL}/auth/realms/{realm}`: the OpenID Connect issuer.
    public var issuer: URL {
        baseURL.appendingPathComponent("auth/realms/\(realm)")
    }

    /// `{issuer}/keyservice/v1`: `createkey` and `key` are below it.
    public var keyServiceURL: URL {
        issuer.appendingPathComponent("keyservice/v1")
    }

    private init(
        baseURL: URL,
        faults: FaultInjection,
        realm: String,
        state: StateStore,
        task: Task<Void, any Error>,
        serviceGroup: ServiceGroup?
    ) {
        self.baseURL = baseURL
        self.faults = faults
        self.realm = realm
        self.state = state
        self.task = task
        self.serviceGroup = serviceGroup
    }

    /// Opens the state, binds the listener and returns once requests are being served.
    ///
    /// - Throws: ``KeyServiceMockError`` when the configuration is unusable, the state directory is
    ///   damaged or in use by another server, or the address cannot be bound.
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
        let address = ServerAddress()
        let provider = IdentityProvider(
            configuration: configuration,
            signer: try TokenSigner.loadOrCreate(in: state),
            sessions: try SessionStore(state: state),
            address: address
        )
        let keyStore = KeyStore(state: state, now: configuration.now)
        let faults = FaultInjection()

        let issuerPath = "/auth/realms/\(configuration.realm)"
        let router = Router(context: MockRequestContext.self)
        router.add(
            middleware: FaultMiddleware(
                faults: faults,
                keyServicePath: "\(issuerPath)/keyservice/v1/",
                tokenPath: "\(issuerPath)/protocol/openid-connect/token"
            )
        )
        KeyServiceRoutes(store: keyStore).add(to: router, under: "\(issuerPath)/keyservice/v1")
        OpenIDRoutes(provider: provider).add(to: router, under: issuerPath)

        var logger = Logger(label: "keyservice-mock")
        logger.logLevel =
            ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? configuration.port)
                portContinuation.finish()
            },
            logger: logger
        )
        // With signals, Hummingbird's own group traps SIGINT and SIGTERM; without, our group lets stop()
        // shut down gracefully: idle keep-alive connections close and requests in flight finish.
        let serviceGroup =
            configuration.stopsOnTerminationSignals
            ? nil : ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            if let serviceGroup {
                try await serviceGroup.run()
            } else {
                try await application.runService()
            }
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
        guard let baseURL = URL(string: "http://\(host):\(boundPort)") else {
            task.cancel()
            throw KeyServiceMockError("the host \(configuration.host) does not make a URL")
        }
        let server = KeyServiceMockServer(
            baseURL: baseURL,
            faults: faults,
            realm: configuration.realm,
            state: state,
            task: task,
            serviceGroup: serviceGroup
        )
        address.issuer = server.issuer.absoluteString
        return server
    }

    private static func validate(_ configuration: KeyServiceMockConfiguration) throws {
        let realmCharacters = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )
        guard !configuration.realm.isEmpty,
            configuration.realm.unicodeScalars.allSatisfy(realmCharacters.contains)
        else {
            throw KeyServiceMockError("the realm must be letters, digits, '-', '.', '_' or '~'")
        }
        guard (0...65_535).contains(configuration.port) else {
            throw KeyServiceMockError("the port must be 0 to 65535")
        }
        for lifetime in [
            configuration.accessTokenLifetime, configuration.idTokenLifetime, configuration.refreshTokenLifetime,
        ] where !(lifetime > 0 && lifetime < 100 * 365 * 86_400) {
            throw KeyServiceMockError("token lifetimes must be positive numbers of seconds")
        }
    }

    /// Stops listening, closes open connections and the state. Calling it again does nothing.
    public func stop() async {
        if let serviceGroup {
            await serviceGroup.triggerGracefulShutdown()
        } else {
            task.cancel()
        }
        _ = try? await task.value
        state.close()
    }

    /// Waits until the server stops: after ``stop()``, or on SIGINT/SIGTERM when
    /// ``KeyServiceMockConfiguration/stopsOnTerminationSignals`` is set; then closes the state.
    /// - Throws: the error that ended the server, if one did.
    public func waitUntilStopped() async throws {
        defer { state.close() }
        try await task.value
    }
}

/// The server could not start; `description` says why and what to change.
public struct KeyServiceMockError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
