import Foundation
import VaultCrypto

/// Everything ``Auth`` and ``UserStorage`` need for one issuer and key service.
public struct VaultConfiguration: Sendable {
    /// The OpenID Connect issuer (in TIM deployments `{server}/auth/realms/{realm}`).
    public var issuer: URL
    /// The public client's id at the issuer.
    public var clientId: String
    /// Where the issuer sends the user back: a loopback URL (`http://127.0.0.1/callback`; the port is
    /// chosen at login, RFC 8252) for command-line tools, or an app's own scheme (then pass the redirect
    /// to ``Auth/handleRedirect(url:)``).
    public var redirectURI: URL
    /// The scopes asked for; `offline_access` is what makes the issuer hand out a refresh token.
    public var scopes: [String]
    /// The key service's v1 base (`{realmBase}/keyservice/v1`).
    public var keyServiceURL: URL
    /// Where envelopes live; nil for `$XDG_DATA_HOME/credential-vault`.
    public var storeDirectory: URL?
    /// An access token is refreshed when it has less than this left (seconds).
    public var leeway: TimeInterval
    /// Seconds to wait for any one HTTP answer.
    public var requestTimeout: TimeInterval
    /// Argon2id cost for new passwords.
    public var opsLimit: UInt64
    /// Argon2id memory for new passwords, in bytes.
    public var memLimitBytes: UInt64
    /// The clock; tests pass their own.
    public var now: @Sendable () -> Date

    /// A configuration; `scopes` default to `openid offline_access`, the leeway to 60 seconds.
    public init(
        issuer: URL,
        clientId: String,
        redirectURI: URL = URL(string: "http://127.0.0.1/callback")!,
        scopes: [String] = ["openid", "offline_access"],
        keyServiceURL: URL,
        storeDirectory: URL? = nil,
        leeway: TimeInterval = 60,
        requestTimeout: TimeInterval = 15,
        opsLimit: UInt64 = Argon2idParameters.defaultOpsLimit,
        memLimitBytes: UInt64 = Argon2idParameters.defaultMemLimitBytes,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.issuer = issuer
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.keyServiceURL = keyServiceURL
        self.storeDirectory = storeDirectory
        self.leeway = leeway
        self.requestTimeout = requestTimeout
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.now = now
    }

    /// A TIM-style configuration: issuer `{server}/auth/realms/{realm}`, key service below it.
    public init(server: URL, realm: String, clientId: String) {
        let issuer = server.appending(path: "auth/realms").appending(path: realm)
        self.init(issuer: issuer, clientId: clientId, keyServiceURL: issuer.appending(path: "keyservice/v1"))
    }
}

/// One configured vault: the THP-style entry point holding ``auth`` and ``userStorage``.
public struct Vault: Sendable {
    /// The configuration both parts were made with.
    public let configuration: VaultConfiguration
    /// Encrypted refresh tokens per user.
    public let userStorage: UserStorage
    /// Login, fresh access tokens, logout.
    public let auth: Auth

    /// Builds both parts over HTTP (URLSession by default).
    /// - Throws: ``VaultError`` when the issuer or key service URL is neither https nor loopback.
    public init(
        configuration: VaultConfiguration,
        transport: any HTTPTransport = URLSessionTransport()
    ) throws(VaultError) {
        guard configuration.issuer.isSecureOrLoopback else {
            throw .auth(.invalidConfiguration(reason: "the issuer must use https (http only for loopback hosts)"))
        }
        let keyService: HTTPKeyService
        do {
            keyService = try HTTPKeyService(
                baseURL: configuration.keyServiceURL,
                transport: transport,
                timeout: configuration.requestTimeout
            )
        } catch {
            throw .storage(.encryptedStorageFailed(.keyServiceFailed(error)))
        }
        self.configuration = configuration
        userStorage = UserStorage(
            keyService: keyService,
            directory: configuration.storeDirectory,
            opsLimit: configuration.opsLimit,
            memLimitBytes: configuration.memLimitBytes,
            now: configuration.now
        )
        auth = Auth(configuration: configuration, userStorage: userStorage, transport: transport)
    }
}
