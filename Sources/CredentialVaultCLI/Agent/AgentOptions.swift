import ArgumentParser
import CredentialVault

/// `--no-agent`: for the commands that take a token from a running `credential-vault agent`.
struct AgentOptions: ParsableArguments {
    @Flag(help: "Unlock here even when a `credential-vault agent` serves this store and user.")
    var noAgent = false

    /// A token from the agent for `connection` meeting `requirement`, unless `--no-agent`; nil when no agent serves
    /// it.
    func token(
        _ connection: ConnectionOptions,
        requirement: TokenRequirement = TokenRequirement()
    ) async throws -> ServedToken? {
        noAgent ? nil : try await AgentClient.token(connection, requirement: requirement)
    }

    /// The token `token`, `whoami` and `exec` use: the agent's when one serves `connection`, else one unlocked here
    /// (device unlock when on, else the password). Every failure has been printed and is an exit already.
    func servedToken(
        _ connection: ConnectionOptions,
        unlocking: UnlockOptions,
        requirement: TokenRequirement = TokenRequirement()
    ) async throws -> ServedToken {
        try await servedToken(
            connection,
            requirement: requirement,
            prompt: unlocking.prompt,
            allowDeviceUnlock: !unlocking.noDeviceUnlock
        )
    }

    /// The token a command hands out, as ``servedToken(_:unlocking:requirement:)``, with the password (when one is
    /// needed) asked through `prompt`.
    func servedToken(
        _ connection: ConnectionOptions,
        requirement: TokenRequirement,
        prompt: PasswordPrompt,
        allowDeviceUnlock: Bool = true
    ) async throws -> ServedToken {
        var served: ServedToken?
        try await Command.run { served = try await token(connection, requirement: requirement) }
        if let served { return served }
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, viaDevice) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: allowDeviceUnlock
            )
            served = ServedToken(
                try await requirement.token(from: context.auth, unlocked: token),
                viaDevice: viaDevice,
                login: await context.auth.loginContext
            )
        }
        guard let served else { throw ExitCode(ExitStatus.failure.rawValue) }
        return served
    }
}
