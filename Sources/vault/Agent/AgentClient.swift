import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Asks a running agent over its socket: one request, one answer.
enum AgentClient {
    /// The agent's answer to `op`, or nil when no agent listens at `address`. A socket whose directory is not
    /// ours and private, or whose listener runs as another user, is not asked (nil): nothing is sent to it.
    static func ask(_ op: String, at address: AgentAddress) async -> AgentReply? {
        guard (try? address.checkDirectory()) != nil else { return nil }
        let path = address.socketPath
        return await BlockingThread.run("vault-agent-client") {
            guard let connection = try? UnixSocket.connect(to: path, timeout: 30) else { return nil }
            defer { close(connection) }
            guard UnixSocket.peerUID(connection) == getuid() else { return nil }
            let request = (try? JSONEncoder().encode(AgentRequest(op: op))) ?? Data()
            guard UnixSocket.writeLine(connection, Array(request)), let line = UnixSocket.readLine(connection) else {
                return nil
            }
            return try? UntrustedJSON.decode(AgentReply.self, from: Data(line))
        }
    }

    /// A token from the agent that serves these options' store and user; nil when none runs (the caller then
    /// unlocks by itself, saying nothing extra).
    /// - Throws: ``CLIError`` with the agent's message and exit status when the agent answers with a failure.
    static func token(_ options: ConnectionOptions) async throws -> ServedToken? {
        guard let address = await VaultContext.agentAddress(options),
            let reply = await ask("token", at: address)
        else { return nil }
        if let served = ServedToken(agentReply: reply) { return served }
        throw CLIError(
            status: reply.exit.flatMap(ExitStatus.init(rawValue:)) ?? .failure,
            description: reply.error ?? "the agent gave no token"
        )
    }
}
