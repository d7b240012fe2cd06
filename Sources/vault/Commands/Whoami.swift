import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault whoami`: the claims of a fresh access token.
struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Show the claims of a fresh access token (a table, or JSON with --json); for an opaque one, sub and exp.",
        discussion: """
            Unlocks like `credential-vault token`: a running `credential-vault agent` first, then device unlock when it is on, otherwise \
            the password. --json prints the token's claims as one object (for an opaque token: sub and exp).
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @Flag(help: "Print the claims as one JSON object.")
    var json = false

    func run() async throws {
        show(try await agent.servedToken(connection, unlocking: unlocking))
    }

    private func show(_ served: ServedToken) {
        // An opaque access token has no claims to show: the user and the expiry stand in for them.
        let claims = served.claims
        if json {
            Terminal.output(Format.json(.object(claims)))
            return
        }
        let user = Format.escapingControlCharacters(served.userId)
        Terminal.output("user \(user) (unlocked with \(served.unlockedWith))")
        if served.isOpaque { Terminal.output("the access token is opaque: only the resource server reads it") }
        Terminal.output(Format.table(claims))
    }
}
