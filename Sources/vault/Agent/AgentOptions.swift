import ArgumentParser
import CredentialVault

/// `--no-agent`: for the commands that take a token from a running `credential-vault agent`.
struct AgentOptions: ParsableArguments {
    @Flag(help: "Unlock here even when a `credential-vault agent` serves this store and user.")
    var noAgent = false

    /// A token from the agent for `connection`, unless `--no-agent`; nil when no agent serves it.
    func token(_ connection: ConnectionOptions) async throws -> ServedToken? {
        noAgent ? nil : try await AgentClient.token(connection)
    }

    /// The token `token`, `whoami` and `exec` use: the agent's when one serves `connection`, else one unlocked here
    /// (device unlock when on, else the password). Every failure has been printed and is an exit already.
    func servedToken(_ connection: ConnectionOptions, unlocking: UnlockOptions) async throws -> ServedToken {
        var served: ServedToken?
        try await Command.run { served = try await token(connection) }
        if let served { return served }
        try await VaultContext.with(connection) { context in
            let (token, viaDevice) = try await context.unlockRegisteredUser(unlocking)
            served = ServedToken(token, viaDevice: viaDevice, login: await context.auth.loginContext)
        }
        guard let served else { throw ExitCode(ExitStatus.failure.rawValue) }
        return served
    }
}
