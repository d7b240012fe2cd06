import ArgumentParser

/// `keyservice`: the TIM KeyService v1 as a production server, on SQLite or PostgreSQL.
@main
struct KeyServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyservice",
        abstract: "A TIM KeyService v1 server: keys that lock after three wrong secrets, on SQLite or PostgreSQL.",
        subcommands: [ServeCommand.self, PeppersCommand.self, NewPepperCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
