import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault config`: each effective setting and where it came from.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each effective setting and its source (flag, environment, config file, default).",
        discussion: """
            Precedence: flags, then environment variables, then the config file \
            ($XDG_CONFIG_HOME/credential-vault/config.json, or --config / CREDENTIAL_VAULT_CONFIG), then defaults.
            Config file keys: \(ConfigFileContents.knownKeys.joined(separator: ", ")).
            Named profiles go in "profiles": {"NAME": {...the same keys...}}; --profile NAME (or \
            CREDENTIAL_VAULT_PROFILE) picks one, and its keys override the top level's. A named profile without a \
            store keeps its logins in profiles/NAME of the default store.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print one JSON object: {name: {\"value\", \"source\"}}.")
    var json = false

    func run() async throws {
        try await Command.run {
            let settings = try Settings(options: connection)
            var rows = settings.rows
            if settings.isEmbedded {
                let environment = ProcessInfo.processInfo.environment
                // Port 0 until first use: shown as a placeholder, since the port is chosen then.
                let issuerURL = EmbeddedKeyService.rememberedIssuer(environment: environment)
                func shown(_ url: URL) -> String {
                    url.absoluteString.replacingOccurrences(
                        of: "127.0.0.1:0/",
                        with: "127.0.0.1:<chosen on first use>/"
                    )
                }
                let issuer = shown(issuerURL)
                let keyService = shown(TIMLayout.keyServiceURL(issuer: issuerURL))
                for index in rows.indices {
                    if rows[index].name == "issuer" { rows[index].setting = Setting(value: issuer, source: .embedded) }
                    if rows[index].name == "key-service" {
                        rows[index].setting = Setting(value: keyService, source: .embedded)
                    }
                }
            }
            if json {
                var object: [String: JSONValue] = [:]
                for row in rows {
                    object[row.name] = .object([
                        "value": row.setting.value.map(JSONValue.string) ?? .null,
                        "source": .string(row.setting.source.description),
                    ])
                }
                Terminal.output(Format.json(.object(object)))
                return
            }
            let width = rows.map(\.name.count).max() ?? 0
            for row in rows {
                // Values and file paths come from the environment and the config file: controls escaped.
                let value = Format.escapingControlCharacters(row.setting.value ?? "-")
                let source = Format.escapingControlCharacters(row.setting.source.description)
                Terminal.output(
                    row.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(value)  (\(source))"
                )
            }
            if settings.isEmbedded {
                Terminal.output(
                    "No issuer or key service is configured: credential-vault runs its embedded KeyServiceMock, with its "
                        + "state under \(Paths.embeddedRoot(environment: ProcessInfo.processInfo.environment).path)."
                )
            }
        }
    }
}
