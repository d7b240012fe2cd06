import ArgumentParser

/// `--no-agent`: for the commands that take a token from a running `credential-vault agent`.
struct AgentOptions: ParsableArguments {
    @Flag(help: "Unlock here even when a `credential-vault agent` serves this store and user.")
    var noAgent = false

    /// A token from the agent for `connection`, unless `--no-agent`; nil when no agent serves it.
    func token(_ connection: ConnectionOptions) async throws -> ServedToken? {
        noAgent ? nil : try await AgentClient.token(connection)
    }
}
