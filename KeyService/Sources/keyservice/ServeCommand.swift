import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import KeyServiceCore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import UnixSignals
import VaultPOSIX

/// `keyservice serve` (the default command): the key service on one address until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve TIM KeyService v1 (createkey, key) and protocol 2 with /healthz, /readyz and /metrics.",
        discussion: """
            Prints one line when ready: "keyservice listening on URL". The key service is at URL/keyservice/v1 \
            (see --base-path), protocol 2 beside it at URL/keyservice/v2. SIGTERM or SIGINT stops it: requests in flight finish first. Logs are JSON lines \
            on standard error (--log-format text for plain lines) and never hold a secret, key or long secret.
            """
    )

    @OptionGroup var storage: StorageOptions
    @OptionGroup var secrets: SecretOptions

    @Option(help: ArgumentHelp("The address to listen on; port 0 picks a free one.", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("The PEM certificate chain to serve TLS with (with --tls-key).", valueName: "file"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-certificate.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: """
            The path createkey and key are below; a TIM deployment uses /auth/realms/REALM/keyservice/v1. Protocol 2 \
            is served beside it, with v2 for its last v1 (not at all for a base that does not end in /v1).
            """
    )
    var basePath = "/keyservice/v1"

    @Option(
        help: "The most keys one client address may create (behind a proxy: see --client-address-header)."
    )
    var maxKeysPerClient = 10_000

    @Option(help: "The most keys the service holds.")
    var maxKeys = 100_000

    @Option(
        help: ArgumentHelp(
            """
            Behind a proxy on this machine: the request header that names the client (X-Real-IP, or             X-Forwarded-For whose last address counts), trusted only on connections from a loopback address.
            """,
            valueName: "name"
        )
    )
    var clientAddressHeader: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(help: "json (one object per line) or text.")
    var logFormat = "json"

    /// For tests: stop when standard input reaches end of file (the parent is gone).
    @Flag(help: .hidden)
    var exitOnStdinEof = false

    func validate() throws {
        guard maxKeysPerClient > 0, maxKeys > 0 else { throw ValidationError("the key limits must be positive") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        guard ["json", "text"].contains(logFormat) else { throw ValidationError("--log-format is json or text") }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        if let clientAddressHeader,
            clientAddressHeader.isEmpty || !clientAddressHeader.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" })
        {
            throw ValidationError("--client-address-header \(clientAddressHeader) is not a header name")
        }
        guard basePath.hasPrefix("/"), !basePath.hasSuffix("/") else {
            throw ValidationError("--base-path starts with / and does not end with one")
        }
    }

    func run() async throws {
        MallocTuning.apply()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "keyservice")
        do {
            try await serve(logger: logger, level: level)
        } catch let error as KeyServiceError {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            FileHandle.standardError.write(Data("keyservice: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    private func serve(logger: Logger, level: Logger.Level) async throws {
        let address = try ListenAddress(listen)
        let tls: ServerTLS?
        if let tlsCertificate, let tlsKey {
            tls = try ServerTLS(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
        } else {
            guard Loopback.isAddress(address.host) else {
                throw KeyServiceError(
                    "plain http on \(address.host) refused: it is not a loopback address, and secrets would cross the "
                        + "network in clear. Give --tls-certificate and --tls-key, or listen on 127.0.0.1 behind a "
                        + "proxy that terminates TLS"
                )
            }
            tls = nil
        }
        let loaded = try secrets.load(mayCreate: true)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let opened = try await storage.open(logger: logger)
        let service = KeyService(
            storage: opened.storage,
            peppers: loaded.peppers,
            limits: KeyLimits(perClient: maxKeysPerClient, total: maxKeys)
        )

        let router = Router(context: KeyServiceRequestContext.self)
        // It logs at .debug only: below that level it would cost every request a middleware step for nothing.
        if level <= .debug {
            router.add(middleware: RequestLogMiddleware())
        }
        router.add(middleware: ServerErrorMiddleware())
        let keyServiceRoutes = KeyServiceRoutes(service: service, forwardedClientHeader: clientAddressHeader)
        keyServiceRoutes.add(to: router, basePath: basePath)
        if let basePathV2 = KeyServiceRoutes.protocolV2BasePath(besideV1: basePath) {
            keyServiceRoutes.addProtocolV2(to: router, basePath: basePathV2)
        } else {
            logger.notice(
                "protocol 2 is not served: its base is the sibling of a --base-path ending in /v1",
                metadata: ["base-path": "\(basePath)"]
            )
        }
        OperationsRoutes(storage: opened.storage, registry: registry).add(to: router)

        let scheme = tls == nil ? "http" : "https"
        let server: HTTPServerBuilder
        if let tls {
            server = try .tls(.http1(), tlsConfiguration: tls.tlsConfiguration)
        } else {
            server = .http1()
        }
        var application = Application(
            router: router,
            server: server,
            // A burst of simultaneous connections waits in the accept queue rather than being reset.
            configuration: .init(address: .hostname(address.host, port: address.port), backlog: 1_024),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                let line = "keyservice listening on \(scheme)://\(address.urlAuthority(port: port))\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger
        )
        let peppers = loaded.peppers
        let keyStorage = opened.storage
        // Before listening (the storage's pool runs by then): a key under a pepper this service lacks cannot open.
        application.beforeServerStarts {
            try await Self.checkPeppers(peppers, storage: keyStorage, logger: logger)
        }
        var services: [any Service] = []
        if let storageService = opened.service { services.append(storageService) }
        services.append(application)
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        if exitOnStdinEof {
            BlockingThread.start("ks-stdin") {
                while true {
                    let chunk = FileHandle.standardInput.availableData
                    if chunk.isEmpty { break }
                }
                Task { await group.triggerGracefulShutdown() }
            }
        }
        try await group.run()
        if let sqlite = opened.storage as? SQLiteKeyStorage {
            await sqlite.finishWrites()
            try? sqlite.close()
        }
        logger.info("stopped")
    }

    /// Refuses to start when keys exist under a pepper version this service does not hold.
    private static func checkPeppers(_ peppers: PepperSet, storage: any KeyStorage, logger: Logger) async throws {
        let counts = try await storage.keysByPepperVersion()
        let missing = counts.filter { $0.value > 0 && peppers.pepper(version: $0.key) == nil }.keys.sorted()
        guard missing.isEmpty else {
            throw KeyServiceError(
                "keys exist under pepper version(s) \(missing.map(String.init).joined(separator: ", ")), which this "
                    + "service does not hold: add their pepper files (or KEYSERVICE_PEPPER_n variables)"
            )
        }
        logger.info(
            "peppers",
            metadata: [
                "newest": "\(peppers.newestVersion)",
                "keys_by_version": "\(counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })",
            ]
        )
    }
}
