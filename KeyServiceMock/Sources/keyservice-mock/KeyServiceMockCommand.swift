import ArgumentParser
import Foundation
import KeyServiceMock
import Logging

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
            """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (the ready line shows it).")
    var port = 0

    @Option(
        help: "Keep keys, lock counts, sessions and the signing key in this directory (SQLite); in memory without it.",
        completion: .directory
    )
    var stateDir: String?

    @Option(help: "The realm: the issuer is http://HOST:PORT/auth/realms/REALM.")
    var realm = "demo"

    @Option(
        help: ArgumentHelp(
            "A user as NAME:PASSWORD[:SUBJECT]; repeat for more. The first is the one the authorization endpoint signs in.",
            valueName: "user"
        )
    )
    var user: [String] = []

    @Option(
        help: ArgumentHelp(
            "A public client as ID=REDIRECT_URI[,REDIRECT_URI...]; repeat for more (default: vault=http://127.0.0.1/callback).",
            valueName: "client"
        )
    )
    var client: [String] = []

    @Option(help: "Access-token lifetime in seconds.")
    var accessTokenLifetime: Double = 300

    @Option(help: "Id-token lifetime in seconds.")
    var idTokenLifetime: Double = 300

    @Option(help: "Refresh-token lifetime in seconds.")
    var refreshTokenLifetime: Double = 30 * 86_400

    @Option(help: "The lowest level logged to standard error; LOG_LEVEL, when set, is the default.")
    var logLevel: LogLevel = .fromEnvironment

    func validate() throws {
        for lifetime in [accessTokenLifetime, idTokenLifetime, refreshTokenLifetime] where !(lifetime > 0) {
            throw ValidationError("token lifetimes must be positive numbers of seconds")
        }
    }

    func run() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.realm = realm
        configuration.stateDirectory = stateDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.idTokenLifetime = idTokenLifetime
        configuration.refreshTokenLifetime = refreshTokenLifetime
        configuration.stopsOnTerminationSignals = true
        // Standard error, always: standard output carries only the ready line.
        configuration.logger = Logger(label: "keyservice-mock") { StreamLogHandler.standardError(label: $0) }
        configuration.logger.logLevel = logLevel.level
        if !user.isEmpty {
            configuration.users = try user.map(Self.parseUser)
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
        FileHandle.standardOutput.write(
            Data("keyservice-mock listening on \(server.baseURL.absoluteString) realm \(realm)\n".utf8)
        )
        do {
            try await server.waitUntilStopped()
        } catch {
            FileHandle.standardError.write(Data("keyservice-mock: stopped: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    static func parseUser(_ text: String) throws -> MockUser {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ValidationError("--user takes NAME:PASSWORD[:SUBJECT], got '\(text)'")
        }
        let subject = parts.count == 3 && !parts[2].isEmpty ? parts[2] : parts[0]
        return MockUser(username: parts[0], password: parts[1], subject: subject)
    }

    static func parseClient(_ text: String) throws -> MockClient {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ValidationError("--client takes ID=REDIRECT_URI[,REDIRECT_URI...], got '\(text)'")
        }
        return MockClient(clientId: parts[0], redirectURIs: parts[1].split(separator: ",").map(String.init))
    }
}
