import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault lock`: ends the session a `credential-vault agent` holds.
struct Lock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "End the session a `credential-vault agent` holds: it forgets the session, removes its socket and exits.",
        discussion: "Makes no network call. Without a running agent for the store and user it says so and exits 0."
    )

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await VaultContext.with(connection, offline: true) { context in
            let userId = try await context.resolveUser()
            let address = context.agentAddress(userId: userId, environment: ProcessInfo.processInfo.environment)
            switch await AgentClient.exchange("lock", at: address) {
            case .answered(let reply) where reply.locked == true:
                Terminal.output("Locked: the agent for \(userId) dropped its session and exits.")
            case .unanswered:
                // Something holds the socket but does not answer: saying "no agent" would be wrong.
                throw CLIError.other(
                    "the agent on \(address.socketPath) did not answer within "
                        + "\(Int(AgentClient.connectTimeout + AgentClient.answerTimeout.seconds)) s; it was not locked"
                )
            default:
                Terminal.note("credential-vault: no agent runs for \(userId) (store \(context.storeDirectory.path))")
            }
        }
    }
}
