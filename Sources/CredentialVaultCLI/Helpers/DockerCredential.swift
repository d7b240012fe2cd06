import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault docker-credential get|store|erase|list|version`: a docker credential helper
/// (docker/docker-credential-helpers' protocol), run by docker as `docker-credential-credential-vault`.
struct DockerCredential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "A docker credential helper: hands docker a fresh access token for a registry.",
        discussion: """
            docker runs docker-credential-NAME from PATH: make it this helper with a two-line script (a symlink \
            cannot add the argument):
              printf '#!/bin/sh\\nexec credential-vault docker-credential "$@"\\n' > ~/.local/bin/docker-credential-credential-vault
              chmod 755 ~/.local/bin/docker-credential-credential-vault
            and name it in ~/.docker/config.json: {"credHelpers": {"registry.example": "credential-vault"}}.
            get reads the registry's URL on standard input and prints {"ServerURL","Username","Secret"} (Secret the \
            access token, Username --username, default oauth2); without a token it prints docker's "credentials not \
            found in native keychain" and exits 1, and docker goes on without credentials (the reason is on \
            standard error). store and erase keep nothing: they read their input and print nothing. list prints {} \
            or, with --server-url, that server and the username. The profile is --profile (or \
            CREDENTIAL_VAULT_PROFILE) when given; else, once a profile of the config file names "hosts", the one \
            naming the registry's host (no profile naming it: "credentials not found").
            """
    )

    @Argument(help: ArgumentHelp("What docker asks: get, store, erase, list or version.", valueName: "operation"))
    var operation: String

    @Option(help: "The username given to docker with the token.")
    var username = "oauth2"

    @Option(help: "The registry `list` names (docker's list shows it); list is {} without it.")
    var serverURL: String?

    @OptionGroup var helper: HelperOptions

    /// What docker's helper client reads as "no credentials here" (docker-credential-helpers' `credentials`).
    static let notFound = "credentials not found in native keychain"

    func validate() throws {
        guard ["get", "store", "erase", "list", "version"].contains(operation) else {
            throw ValidationError("docker-credential takes get, store, erase, list or version, not \(operation)")
        }
    }

    func run() async throws {
        switch operation {
        case "get":
            try await get()
        case "list":
            let servers: [String: JSONValue] = serverURL.map { [$0: .string(username)] } ?? [:]
            Terminal.output(Format.json(.object(servers)))
        case "version":
            Terminal.output("credential-vault \(CredentialVaultCommand.configuration.version)")
        default:
            // store (JSON with a secret) and erase (a URL): read and dropped; nothing is kept here.
            var input = Terminal.readAllStandardInput(limit: 64 * 1024)
            input.resetBytes(in: 0..<input.count)
        }
    }

    /// The registry's host (with its port when one is given) in docker's `ServerURL`, which is a URL
    /// (`https://registry.example/v2/`) or a bare host (`registry.example:5000`); nil when it names none.
    static func registryHost(_ server: String) -> String? {
        guard let url = URL(string: server.contains("://") ? server : "https://" + server), let host = url.host(),
            !host.isEmpty
        else { return nil }
        let name = host.contains(":") ? "[\(host)]" : host
        return (url.port.map { "\(name):\($0)" } ?? name).lowercased()
    }

    private func get() async throws {
        let input = Terminal.readAllStandardInput(limit: 8 * 1024)
        let server = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let served: ServedToken
        do {
            guard let options = try helper.connection(forHost: Self.registryHost(server)) else {
                Terminal.note(
                    "credential-vault: no profile names \(Format.escapingControlCharacters(server)) in its hosts"
                )
                throw ExitCode.failure
            }
            served = try await helper.servedToken(for: options)
        } catch {
            // The reason goes to standard error; docker reads this line as "no credentials" and goes on.
            if !(error is ExitCode) { _ = Command.fail(CLIError.from(error)) }
            Terminal.output(Self.notFound)
            throw ExitCode.failure
        }
        Terminal.output(
            Format.json(
                .object([
                    "ServerURL": .string(server),
                    "Username": .string(username),
                    "Secret": .string(served.token),
                ])
            )
        )
    }
}
