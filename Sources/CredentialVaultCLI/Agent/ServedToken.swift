import CredentialVault
import Foundation

/// An access token as `token`, `whoami` and `exec` use it, from the agent or from an unlock in this process.
struct ServedToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token (a secret: printed only by `credential-vault token`, put only in the environment of `credential-vault exec`'s command).
    let token: String
    /// `Bearer`, or `DPoP` for a token bound to the login's key (which goes with a proof: `credential-vault dpop-proof`).
    let tokenType: String
    let userId: String
    let expireDate: Date?
    /// How the session was opened: "the agent", "device unlock" or "the password".
    let unlockedWith: String
    /// How the user authenticated for the login, as its id token said (nil, empty when it did not): the `acr`, the
    /// `amr`, the `auth_time`, and whether the `acr` is one of the `acr_values` the login asked for.
    let acr: String?
    let amr: [String]
    let authTime: Date?
    let acrMet: Bool

    init(_ token: AccessToken, viaDevice: Bool, login: LoginContext?) {
        self.token = token.token
        tokenType = token.tokenType
        userId = token.userId
        expireDate = token.expireDate
        unlockedWith = viaDevice ? "device unlock" : "the password"
        acr = login?.acr
        amr = login?.amr ?? []
        authTime = login?.authTime
        acrMet = login?.acrMet ?? true
    }

    init?(agentReply reply: AgentReply) {
        guard let token = reply.token, let userId = reply.userId else { return nil }
        self.token = token
        tokenType = reply.tokenType ?? "Bearer"
        self.userId = userId
        expireDate = reply.expiresAt.map { Date(timeIntervalSince1970: $0) }
        unlockedWith = "the agent"
        acr = reply.acr
        amr = reply.amr ?? []
        authTime = reply.authTime.map { Date(timeIntervalSince1970: $0) }
        acrMet = reply.acrMet ?? true
    }

    /// `{"token", "tokenType", "userId", "expiresAt"}`: expiresAt in Unix seconds, null when the issuer did not say.
    var json: JSONValue {
        .object([
            "token": .string(token),
            "tokenType": .string(tokenType),
            "userId": .string(userId),
            "expiresAt": expireDate.map { .number($0.timeIntervalSince1970.rounded()) } ?? .null,
        ])
    }

    /// The claims of a JWT access token; for an opaque one, `sub` and `exp` stand in for them.
    var claims: [String: JSONValue] {
        (try? JWT(token: token))?.claims ?? [
            "sub": .string(userId),
            "exp": expireDate.map { .number($0.timeIntervalSince1970.rounded()) } ?? .null,
        ]
    }

    /// Whether the token is opaque (not a JWT this tool can read).
    var isOpaque: Bool { (try? JWT(token: token)) == nil }

    /// Never the token.
    var description: String { "ServedToken(userId: \(userId), token: redacted)" }
    var debugDescription: String { description }
}
