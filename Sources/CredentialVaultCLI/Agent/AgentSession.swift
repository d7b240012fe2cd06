import CredentialVault
import Foundation

/// The agent's state: the logged-in ``Auth``, and when the session ends (idle timeout, maximum lifetime, `lock`, or
/// a login the issuer no longer accepts). Once it ends, the `Auth` is released: the library zeroes the session's
/// secrets when it goes.
actor AgentSession {
    let userId: String
    let store: String
    let idleTimeout: Duration
    let maxLifetime: Duration
    private var auth: Auth?
    /// The store the session's login lives in: a `logout` in another process erases the login there, and the agent
    /// must not hand out its cached access token after that, even when the logout could not reach it.
    private let storage: UserStorage
    private let started = ContinuousClock.now
    private var lastUse = ContinuousClock.now

    init(
        auth: Auth,
        storage: UserStorage,
        userId: String,
        store: String,
        idleTimeout: Duration,
        maxLifetime: Duration
    ) {
        self.auth = auth
        self.storage = storage
        self.userId = userId
        self.store = store
        self.idleTimeout = idleTimeout
        self.maxLifetime = maxLifetime
    }

    /// Whether the session has ended.
    var hasEnded: Bool { auth == nil }

    /// Ends the session when its idle timeout or maximum lifetime has passed; true once it has ended.
    func endIfExpired() -> Bool {
        let now = ContinuousClock.now
        if now - lastUse >= idleTimeout || now - started >= maxLifetime { end() }
        return hasEnded
    }

    /// Drops the logged-in `Auth`: no token is handed out after this.
    func end() {
        auth = nil
    }

    /// The answer to one request. Concurrent `token` requests share the library's single refresh.
    func answer(_ request: AgentRequest) async -> AgentReply {
        guard let auth else {
            return .failure(
                CLIError.other("the agent's session has ended: start it again with `credential-vault agent`")
            )
        }
        switch request.op {
        case "token":
            lastUse = ContinuousClock.now
            // One small read per token: a login ended in the store (logout, or the user cleared) ends the session.
            guard await storage.hasStoredRefreshToken(userId: userId) else {
                end()
                return .failure(
                    CLIError.from(
                        VaultError(.notRegistered, reason: "The login of \(userId) was ended (logged out)."),
                        userId: userId
                    )
                )
            }
            if let minTTL = request.minTTL, !TokenRequirement.minimumValidityRange.contains(minTTL) {
                return .failure(CLIError.usage("minTTL is a number of seconds from 0 to 86400"))
            }
            do {
                let token = try await request.requirement.token(from: auth)
                let login = await auth.loginContext
                return AgentReply(
                    token: token.token,
                    tokenType: token.tokenType,
                    userId: token.userId,
                    expiresAt: token.expireDate?.timeIntervalSince1970,
                    acr: login?.acr,
                    amr: login?.amr,
                    authTime: login?.authTime?.timeIntervalSince1970,
                    acrMet: login?.acrMet
                )
            } catch {
                // A login the issuer refused ends the library's session: the agent ends with it.
                let loggedIn = await auth.isLoggedIn
                let vaultError = error as? VaultError
                if vaultError?.isLoginExpired == true || vaultError?.isNotRegistered == true || !loggedIn { end() }
                return .failure(CLIError.from(error, userId: userId))
            }
        case "dpop-proof":
            lastUse = ContinuousClock.now
            guard let method = request.method, let text = request.url, let url = URL(string: text) else {
                return .failure(CLIError.usage("a dpop-proof request names a method and a url"))
            }
            do {
                // For a resource request: `ath` is the hash of the token the agent hands out now.
                let token = try await auth.getAccessToken()
                return AgentReply(
                    token: token.token,
                    tokenType: token.tokenType,
                    proof: try await auth.dpopProof(
                        method: method,
                        url: url,
                        accessToken: token.token,
                        nonce: request.nonce
                    )
                )
            } catch {
                return .failure(CLIError.from(error, userId: userId))
            }
        case "status":
            let idleEnd = ContinuousClock.now.duration(to: lastUse + idleTimeout)
            let lifeEnd = ContinuousClock.now.duration(to: started + maxLifetime)
            return AgentReply(
                userId: userId,
                store: store,
                pid: getpid(),
                idleTimeout: idleTimeout.seconds,
                maxLifetime: maxLifetime.seconds,
                endsAt: Date().addingTimeInterval(min(idleEnd, lifeEnd).seconds).timeIntervalSince1970.rounded()
            )
        case "lock":
            end()
            return AgentReply(locked: true)
        default:
            return .failure(CLIError.usage("unknown agent request '\(request.op)'"))
        }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
