import CredentialVault
import Foundation
import VaultPOSIX

/// Asks a running agent over its socket: one request, one answer.
enum AgentClient {
    /// How long a client waits for the agent to take its connection.
    static let connectTimeout: TimeInterval = 5
    /// How long a client waits for the whole answer once connected (a refresh at the issuer may be part of it).
    static let answerTimeout = Duration.seconds(30)

    /// What came of asking.
    enum Outcome: Sendable {
        /// The agent answered.
        case answered(AgentReply)
        /// No agent listens there (or one that is not ours and private: it is not asked).
        case noAgent
        /// Something listens but did not take the connection or answer in time.
        case unanswered
    }

    /// The agent's answer to `op`, or nil when no agent listens at `address` or it does not answer in time (which is
    /// said in one line on standard error: the caller then goes on without it). A socket whose directory is not ours
    /// and private, or whose listener runs as another user, is not asked (nil): nothing is sent to it.
    static func ask(_ op: String, at address: AgentAddress) async -> AgentReply? {
        await ask(AgentRequest(op: op), at: address)
    }

    /// The agent's answer to `request`, as ``ask(_:at:)-(String,_)``.
    static func ask(_ request: AgentRequest, at address: AgentAddress) async -> AgentReply? {
        switch await exchange(request, at: address) {
        case .answered(let reply):
            return reply
        case .noAgent:
            return nil
        case .unanswered:
            Terminal.note(
                "credential-vault: the agent on \(address.socketPath) did not answer within "
                    + "\(Int(connectTimeout + answerTimeout.seconds)) s; going on without it."
            )
            return nil
        }
    }

    /// One request and its answer, each step bounded in time.
    static func exchange(_ op: String, at address: AgentAddress) async -> Outcome {
        await exchange(AgentRequest(op: op), at: address)
    }

    /// One request and its answer, each step bounded in time.
    static func exchange(_ agentRequest: AgentRequest, at address: AgentAddress) async -> Outcome {
        guard (try? address.checkDirectory()) != nil else { return .noAgent }
        let path = address.socketPath
        return await BlockingThread.run("agent-client") { () -> Outcome in
            let connection: Int32
            do {
                guard let connected = try UnixSocket.connect(to: path, timeout: connectTimeout) else { return .noAgent }
                connection = connected
            } catch {
                return .unanswered
            }
            defer { close(connection) }
            guard PeerCredentials.userID(of: connection) == getuid() else { return .noAgent }
            let deadline = ContinuousClock.now + answerTimeout
            let request = (try? JSONEncoder().encode(agentRequest)) ?? Data()
            guard UnixSocket.writeLine(connection, Array(request)),
                let line = UnixSocket.readLine(connection, deadline: deadline)
            else {
                return .unanswered
            }
            guard let reply = try? UntrustedJSON.decode(AgentReply.self, from: Data(line)) else { return .unanswered }
            return .answered(reply)
        }
    }

    /// A token from the agent that serves these options' store and user, meeting `requirement`; nil when none runs (the caller then
    /// unlocks by itself, saying nothing extra).
    /// - Throws: ``CLIError`` with the agent's message and exit status when the agent answers with a failure.
    static func token(
        _ options: ConnectionOptions,
        requirement: TokenRequirement = TokenRequirement()
    ) async throws -> ServedToken? {
        guard let address = await VaultContext.agentAddress(options) else { return nil }
        return try await token(at: address, requirement: requirement)
    }

    /// A token from the agent at `address`, meeting `requirement`; nil when none answers there.
    /// - Throws: ``CLIError`` with the agent's message and exit status when the agent answers with a failure.
    static func token(at address: AgentAddress, requirement: TokenRequirement) async throws -> ServedToken? {
        guard let reply = await ask(.token(requirement), at: address) else { return nil }
        if let served = ServedToken(agentReply: reply) { return served }
        throw reply.failure(otherwise: "the agent gave no token")
    }

    /// A DPoP proof for one `method` request to `url` from the agent that serves these options' store and user, with
    /// `ath` of the access token it hands out (returned with it); nil when none runs.
    /// - Throws: ``CLIError`` with the agent's message and exit status when the agent answers with a failure.
    static func dpopProof(
        _ options: ConnectionOptions,
        method: String,
        url: URL,
        nonce: String?
    ) async throws -> (proof: String, token: String?)? {
        guard let address = await VaultContext.agentAddress(options) else { return nil }
        return try await dpopProof(at: address, method: method, url: url, nonce: nonce)
    }

    /// A DPoP proof from the agent at `address` (``dpopProof(_:method:url:nonce:)``); nil when none answers there.
    /// - Throws: ``CLIError`` with the agent's message and exit status when the agent answers with a failure.
    static func dpopProof(
        at address: AgentAddress,
        method: String,
        url: URL,
        nonce: String?
    ) async throws -> (proof: String, token: String?)? {
        let request = AgentRequest(op: "dpop-proof", method: method, url: url.absoluteString, nonce: nonce)
        guard let reply = await ask(request, at: address) else { return nil }
        if let proof = reply.proof { return (proof, reply.token) }
        throw reply.failure(otherwise: "the agent gave no proof")
    }
}
