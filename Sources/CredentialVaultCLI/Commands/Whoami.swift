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
            the password. Below the user, a `login` line says how the user authenticated, as the login's id token \
            said: acr (and whether it is one of the --acr-values asked for), amr and auth_time. --json prints the \
            token's claims as one object (for an opaque token: sub and exp).
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
        if let login = Self.loginLine(served) { Terminal.output(login) }
        if served.isOpaque { Terminal.output("the access token is opaque: only the resource server reads it") }
        Terminal.output(Format.table(claims))
    }

    /// `login acr A, amr M, auth_time T`: how the user authenticated, as the login's id token said (sealed with the
    /// login); nil when it said nothing. The issuer's words are shown with controls escaped.
    static func loginLine(_ served: ServedToken) -> String? {
        var parts: [String] = []
        if let acr = served.acr {
            parts.append(
                "acr \(Format.escapingControlCharacters(acr))"
                    + (served.acrMet ? "" : " (not one of the acr_values asked for: log in again to step up)")
            )
        } else if !served.acrMet {
            parts.append("no acr (the acr_values asked for were not confirmed: log in again to step up)")
        }
        if !served.amr.isEmpty {
            parts.append("amr \(served.amr.map { Format.escapingControlCharacters($0) }.joined(separator: " "))")
        }
        if let authTime = served.authTime {
            parts.append("auth_time \(Format.localDate(authTime))")
        }
        return parts.isEmpty ? nil : "login " + parts.joined(separator: ", ")
    }
}
