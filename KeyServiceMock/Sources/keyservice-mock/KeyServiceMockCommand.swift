import ArgumentParser
import Foundation
import KeyServiceCore
import KeyServiceMock
import Logging
import VaultPOSIX

/// `keyservice-mock`: the key service and identity provider on 127.0.0.1, for integration tests and demos.
@main
struct KeyServiceMockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyservice-mock",
        abstract: "A TIM KeyService v1 and OpenID Connect provider on loopback, for tests and demos.",
        discussion: """
            Prints one line when ready: "keyservice-mock listening on http://HOST:PORT realm REALM".
            The issuer is http://HOST:PORT/auth/realms/REALM and the key service is below it at
            keyservice/v1. SIGINT or SIGTERM stops the server cleanly. Logs go to standard error; at debug \
            level every request and decision is logged, never a secret, key or token.

            A --state-dir is created with mode 700; an existing one must be mode 700 and yours. It holds the \
            SQLite database and, in files of their own, the pepper and the signing key: neither is ever \
            replaced, so a missing or unreadable one stops the server (without the pepper no key opens).

            --smart adds a SMART on FHIR mode: a FHIR base at http://HOST:PORT/fhir/r4 (the ready line ends \
            with "fhir FHIR_BASE") with .well-known/smart-configuration and metadata, launch context in \
            token responses, opaque access tokens, a Patient endpoint, and POST /smart/ehr-launch \
            {"patient":"p3","encounter":"e2"} to create an EHR launch id. --smart-backend-client adds a SMART \
            Backend Services client: the token endpoint then takes its client_credentials grant, authenticated by \
            a private_key_jwt assertion (RS384, ES384, RS256 or ES256) that a key of its JWK Set verifies.
            """
    )

    @Option(help: "The address to listen on: a loopback address (127.0.0.0/8 or ::1) unless --allow-non-loopback.")
    var host = "127.0.0.1"

    @Flag(
        help: """
            Listen on a --host that is not loopback. Anyone who reaches it can then create keys, guess secrets \
            and try the users' passwords: for a test network only.
            """
    )
    var allowNonLoopback = false

    @Option(help: "The port to listen on; 0 picks a free one (the ready line shows it).")
    var port = 0

    @Option(
        help:
            "Keep keys, lock counts, sessions and the signing key in this directory (mode 700); in memory without it.",
        completion: .directory
    )
    var stateDir: String?

    @Option(help: "The realm: the issuer is http://HOST:PORT/auth/realms/REALM.")
    var realm = "demo"

    @Option(
        help: ArgumentHelp(
            """
            The identity provider's users: a file of NAME:PASSWORD[:SUBJECT] lines (blank lines and lines \
            starting with # are skipped), readable by its owner only (chmod 600). The first user is the one \
            the authorization endpoint signs in. Default: demo:demo-password:demo-user.
            """,
            valueName: "file"
        ),
        completion: .file()
    )
    var usersFile: String?

    /// The old `--user NAME:PASSWORD`: refused with a pointer to `--users-file`, since argv is visible to
    /// every local user.
    @Option(help: .hidden)
    var user: [String] = []

    @Option(
        help: ArgumentHelp(
            "A public client as ID=REDIRECT_URI[,REDIRECT_URI...]; repeat for more (default: vault=http://127.0.0.1/callback).",
            valueName: "client"
        )
    )
    var client: [String] = []

    @Option(help: "The most keys one client (one IPv4 address, or one IPv6 /64) may create; more answer 429.")
    var maxKeysPerClient = 10_000

    @Option(help: "The most keys the key service holds in all; more answer 507.")
    var maxKeys = 100_000

    @Option(help: "Access-token lifetime in seconds.")
    var accessTokenLifetime: Double = 300

    @Option(help: "Id-token lifetime in seconds.")
    var idTokenLifetime: Double = 300

    @Option(help: "Refresh-token lifetime in seconds.")
    var refreshTokenLifetime: Double = 30 * 86_400

    @Option(help: "The lowest level logged to standard error; LOG_LEVEL, when set, is the default.")
    var logLevel: LogLevel = .fromEnvironment

    @Flag(help: "Turn on the SMART on FHIR mode: a FHIR base at http://HOST:PORT/fhir/r4 (see the discussion).")
    var smart = false

    @Flag(
        help:
            "SMART mode with discovery through the CapabilityStatement only (.well-known/smart-configuration is 404); implies --smart."
    )
    var smartLegacy = false

    @Flag(help: "SMART mode without PKCE S256: plain or no PKCE is taken; implies --smart.")
    var smartWithoutS256 = false

    @Flag(
        help:
            "SMART mode that repeats the launch context in refresh_token answers (left out otherwise); implies --smart."
    )
    var smartRefreshIncludesContext = false

    @Flag(
        help: """
            SMART mode that checks private_key_jwt assertions as SMART's asymmetric client authentication says:             RS384 or ES384 only, aud the token endpoint at every endpoint (kid is always required); implies --smart.
            """
    )
    var smartStrictAssertions = false

    @Option(
        help: ArgumentHelp(
            """
            A SMART Backend Services client as ID=JWKS_FILE, the file holding its public keys as a JWK Set \
            ({"keys":[...]}, each key with a kid); repeat for more; implies --smart.
            """,
            valueName: "client"
        ),
        completion: .file()
    )
    var smartBackendClient: [String] = []

    @Flag(
        help: """
            Take OAuth 2.0 Dynamic Client Registration (RFC 7591, RFC 7592) at \
            http://HOST:PORT/auth/realms/REALM/clients-registrations/openid-connect: public, client_secret_basic, \
            client_secret_post and private_key_jwt clients, whose methods the token endpoint then enforces.
            """
    )
    var dynamicRegistration = false

    @Flag(help: "Stop when standard input reaches end of file (a parent process that started this one has gone).")
    var exitOnStdinEof = false

    @Option(help: "Serve https with this certificate chain (PEM, the server's certificate first); needs --tls-key.")
    var tlsCertificate: String?

    @Option(help: "The private key (unencrypted PEM) of --tls-certificate.")
    var tlsKey: String?

    func validate() throws {
        guard user.isEmpty else {
            throw ValidationError(
                "--user is gone: a password on the command line is visible to every local user. Put "
                    + "NAME:PASSWORD[:SUBJECT] lines in a file only you can read (chmod 600) and pass --users-file FILE"
            )
        }
        guard maxKeysPerClient > 0, maxKeys > 0 else {
            throw ValidationError("--max-keys-per-client and --max-keys must be positive")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        for lifetime in [accessTokenLifetime, idTokenLifetime, refreshTokenLifetime] where !(lifetime > 0) {
            throw ValidationError("token lifetimes must be positive numbers of seconds")
        }
    }

    func run() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.host = host
        configuration.allowsNonLoopbackHost = allowNonLoopback
        configuration.maximumKeysPerClient = maxKeysPerClient
        configuration.maximumKeys = maxKeys
        configuration.port = port
        configuration.realm = realm
        configuration.stateDirectory = stateDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.idTokenLifetime = idTokenLifetime
        configuration.refreshTokenLifetime = refreshTokenLifetime
        configuration.stopsOnTerminationSignals = true
        configuration.dynamicRegistration = dynamicRegistration
        if let tlsCertificate, let tlsKey {
            do {
                configuration.tls = try ServerTLS(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
            } catch {
                FileHandle.standardError.write(Data("keyservice-mock: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
        if smart || smartLegacy || smartWithoutS256 || smartRefreshIncludesContext || smartStrictAssertions
            || !smartBackendClient.isEmpty
        {
            var mode = SMARTMode()
            if smartStrictAssertions { mode.clientAssertions = .smart }
            mode.discovery = smartLegacy ? .capabilityStatementOnly : .wellKnown
            mode.offersS256 = !smartWithoutS256
            mode.refreshIncludesContext = smartRefreshIncludesContext
            do {
                mode.backendClients = try smartBackendClient.map(Self.loadBackendClient)
            } catch {
                FileHandle.standardError.write(Data("keyservice-mock: \(error)\n".utf8))
                throw ExitCode.failure
            }
            configuration.smart = mode
        }
        // Standard error, always: standard output carries only the ready line.
        configuration.logger = Logger(label: "keyservice-mock") { StreamLogHandler.standardError(label: $0) }
        configuration.logger.logLevel = logLevel.level
        if let usersFile {
            do {
                configuration.users = try UsersFile.load(path: usersFile)
            } catch {
                FileHandle.standardError.write(Data("keyservice-mock: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
        if !client.isEmpty {
            configuration.clients = try client.map(Self.parseClient)
        }
        let server: KeyServiceMockServer
        do {
            server = try await KeyServiceMockServer.start(configuration)
        } catch {
            FileHandle.standardError.write(Data("keyservice-mock: \(error)\n".utf8))
            throw ExitCode.failure
        }
        // Written straight to the file descriptor: a pipe's reader sees the line at once.
        let fhir = configuration.smart == nil ? "" : " fhir \(server.fhirBase.absoluteString)"
        FileHandle.standardOutput.write(
            Data("keyservice-mock listening on \(server.baseURL.absoluteString) realm \(realm)\(fhir)\n".utf8)
        )
        if exitOnStdinEof {
            // A blocking read, on a thread of its own: end of file (or an error) means the parent is gone.
            BlockingThread.start("ksmock-stdin") {
                var buffer = [UInt8](repeating: 0, count: 256)
                while buffer.withUnsafeMutableBytes({ read(0, $0.baseAddress, $0.count) }) > 0 {}
                Task { await server.stop() }
            }
        }
        do {
            try await server.waitUntilStopped()
        } catch {
            FileHandle.standardError.write(Data("keyservice-mock: stopped: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// `ID=JWKS_FILE`: the backend client `ID` with the JWK Set the file holds (checked when the server starts).
    static func loadBackendClient(_ text: String) throws -> RegisteredBackendClient {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ValidationError("--smart-backend-client takes ID=JWKS_FILE, got '\(text)'")
        }
        let jwks: String
        do {
            jwks = try String(contentsOfFile: parts[1], encoding: .utf8)
        } catch {
            throw ValidationError("--smart-backend-client \(parts[0]): cannot read the JWK Set file \(parts[1])")
        }
        return RegisteredBackendClient(clientId: parts[0], jwks: jwks)
    }

    static func parseClient(_ text: String) throws -> MockClient {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ValidationError("--client takes ID=REDIRECT_URI[,REDIRECT_URI...], got '\(text)'")
        }
        return MockClient(clientId: parts[0], redirectURIs: parts[1].split(separator: ",").map(String.init))
    }
}
