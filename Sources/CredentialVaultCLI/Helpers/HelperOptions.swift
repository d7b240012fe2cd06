import ArgumentParser
import CredentialVault
import Foundation

/// What the helper commands (git, kubectl, docker) share: the connection, the agent, `--min-ttl` and
/// `--force-refresh`, and how they get a token without a terminal.
struct HelperOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var agent: AgentOptions

    @OptionGroup var freshness: TokenOptions

    /// The connection options of the profile that serves `host` (git's `host`, docker's registry; `host:port` when
    /// a port is given); nil when no profile does.
    ///
    /// `--profile` decides alone when given: the helper line `setup-git --profile` writes for one host, or
    /// kubectl's exec arguments. Else, when no profile of the config file (its top level included) names `hosts`,
    /// the default profile (or `CREDENTIAL_VAULT_PROFILE`'s) serves every host, as before profiles: `setup-git` and
    /// docker's `credHelpers` choose which hosts reach the helper. Once any profile names hosts, the profile whose
    /// `hosts` holds `host` serves it (a named one first, by name; then the top level), whatever
    /// `CREDENTIAL_VAULT_PROFILE` says, and a host none names gets nothing: the calling program then asks its next
    /// helper, or goes on without credentials. A variable exported for `token` never widens what a host gets.
    /// - Throws: ``CLIError`` for a config file that cannot be read.
    func connection(forHost host: String?) throws -> ConnectionOptions? {
        if !connection.profiles.isEmpty { return connection }
        let environment = ProcessInfo.processInfo.environment
        let contents = try Settings.configFileContents(options: connection, environment: environment)
        guard contents.namesHosts else { return connection }
        guard let host, let claim = contents.profile(claiming: host) else { return nil }
        return connection.withProfile(claim, exactly: true)
    }

    /// A token for the calling program: the agent's when one runs, else device unlock when it is on, else the
    /// password, asked at the terminal or through `CREDENTIAL_VAULT_ASKPASS` / `SSH_ASKPASS` (standard input is the
    /// calling program's, never read for a password). Every failure has been printed and is an exit already.
    ///
    /// The token is checked to be one word of visible ASCII, so it cannot break the line or the JSON it goes into,
    /// and to be a Bearer token: these programs cannot make a DPoP proof per request.
    /// - Parameters:
    ///   - options: the connection of the profile chosen (``connection(forHost:)``); nil: ``connection``.
    ///   - usesTerminal: false when the calling program says the terminal is not the helper's.
    /// - Returns: the token, checked.
    /// - Throws: an `ExitCode`, the failure already printed.
    func servedToken(for options: ConnectionOptions? = nil, usesTerminal: Bool = true) async throws -> ServedToken {
        let served = try await agent.servedToken(
            options ?? connection,
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
