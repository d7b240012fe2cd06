import ArgumentParser
import CredentialVault
import Foundation

/// What the helper commands (git, kubectl, docker) share: the connection, the agent, `--min-ttl` and
/// `--force-refresh`, and how they get a token without a terminal.
struct HelperOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var agent: AgentOptions

    @OptionGroup var freshness: TokenOptions

    /// A token for the calling program: the agent's when one runs, else device unlock when it is on, else the
    /// password, asked at the terminal or through `CREDENTIAL_VAULT_ASKPASS` / `SSH_ASKPASS` (standard input is the
    /// calling program's, never read for a password). Every failure has been printed and is an exit already.
    ///
    /// The token is checked to be one word of visible ASCII, so it cannot break the line or the JSON it goes into,
    /// and to be a Bearer token: these programs cannot make a DPoP proof per request.
    /// - Parameter usesTerminal: false when the calling program says the terminal is not the helper's.
    func servedToken(usesTerminal: Bool = true) async throws -> ServedToken {
        let served = try await agent.servedToken(
            connection,
            requirement: freshness.requirement,
            prompt: PasswordPrompt(fromStandardInput: false, forHelper: true, usesTerminal: usesTerminal)
        )
        guard served.tokenType != AccessToken.dpopType else {
            throw Command.fail(
                CLIError.configuration(
                    "the login's tokens are bound to a DPoP key, and git, kubectl and docker cannot send the proof "
                        + "each request needs: use a login without DPoP for them"
                )
            )
        }
        guard !served.token.isEmpty, served.token.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw Command.fail(
                CLIError.other("the issuer's access token holds characters a helper protocol cannot carry")
            )
        }
        return served
    }
}
