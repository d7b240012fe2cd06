import Foundation

/// The agent's answer: one JSON line. A token (`token`, `userId`, `expiresAt` in Unix seconds or absent, and the
/// login's `acr`, `amr`, `authTime` in Unix seconds and `acrMet` when its id token said them), the
/// status (`userId`, `store`, `pid`, `idleTimeout`, `maxLifetime`, `endsAt`), `locked`, or a failure (`error`, the
/// message `credential-vault` prints, and `exit`, the exit status it ends with).
struct AgentReply: Codable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    var token: String?
    /// The token's type: `Bearer`, or `DPoP` for a token bound to the login's key.
    var tokenType: String?
    /// A DPoP proof (`dpop-proof`): a secret for one request.
    var proof: String?
    var userId: String?
    var expiresAt: Double?
    var acr: String?
    var amr: [String]?
    var authTime: Double?
    var acrMet: Bool?
    var store: String?
    var pid: Int32?
    var idleTimeout: Double?
    var maxLifetime: Double?
    var endsAt: Double?
    var locked: Bool?
    var error: String?
    var exit: Int32?

    static func failure(_ error: CLIError) -> AgentReply {
        AgentReply(error: error.description, exit: error.status.rawValue)
    }

    /// The failure this reply reports, with its message and exit status; `otherwise` when it names none.
    func failure(otherwise: String) -> CLIError {
        CLIError(status: exit.flatMap(ExitStatus.init(rawValue:)) ?? .failure, description: error ?? otherwise)
    }

    /// The line sent over the socket.
    var line: [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data(#"{"error":"unencodable","exit":70}"#.utf8)) }

    /// Never the token.
    var description: String { "AgentReply(userId: \(userId ?? "-"), token: \(token == nil ? "none" : "redacted"))" }
    var debugDescription: String { description }
}
