import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault token`: a fresh access token on standard output, for scripts.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a fresh access token (and nothing else) on standard output.",
        discussion: """
            For scripts: curl -H "Authorization: Bearer $(credential-vault token)" https://api.example
            Asks a running `credential-vault agent` for the store and user first (no password); otherwise uses device unlock \
            when it is on for the user, else the password, typed at the terminal or read with --password-stdin.
            With --json: {"token": the access token, "tokenType": "Bearer" or "DPoP", "userId": the vault's user, \
            "expiresAt": Unix seconds or null}. A DPoP token goes as "Authorization: DPoP <token>" with a proof per \
            request: `credential-vault dpop-proof --method GET --url URL`.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @Flag(help: "Print {\"token\", \"tokenType\", \"userId\", \"expiresAt\"} as one JSON object.")
    var json = false

    func run() async throws {
        output(try await agent.servedToken(connection, unlocking: unlocking))
    }

    private func output(_ served: ServedToken) {
        Terminal.output(json ? Format.json(served.json) : served.token)
    }
}
