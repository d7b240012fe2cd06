import Foundation

/// A user the identity provider knows: the password grant checks `password`, and the
/// authorization endpoint signs in `users[0]` of the configuration without asking.
public struct MockUser: Sendable {
    /// The name the password grant takes (`username`), also `preferred_username` in tokens.
    public var username: String
    /// The password the password grant takes.
    public var password: String
    /// The `sub` claim of every token issued to this user.
    public var subject: String
    /// The `login_provider` claim of every token issued to this user.
    public var loginProvider: String

    /// A user; `loginProvider` defaults to `"password"`.
    public init(username: String, password: String, subject: String, loginProvider: String = "password") {
        self.username = username
        self.password = password
        self.subject = subject
        self.loginProvider = loginProvider
    }
}

/// A public OAuth client (no secret), identified by `clientId`.
///
/// A loopback redirect URI (`http://127.0.0.1/...`, `http://[::1]/...`, `http://localhost/...`)
/// matches on any port, as RFC 8252 section 7.3 asks; every other URI must match exactly.
public struct MockClient: Sendable {
    /// The `client_id` the client sends; also the `aud` of its tokens.
    public var clientId: String
    /// The redirect URIs the authorization and logout endpoints accept for this client.
    public var redirectURIs: [String]

    /// A public client with its registered redirect URIs.
    public init(clientId: String, redirectURIs: [String]) {
        self.clientId = clientId
        self.redirectURIs = redirectURIs
    }
}

/// How a ``KeyServiceMockServer`` listens, what it keeps and whom it knows.
public struct KeyServiceMockConfiguration: Sendable {
    /// The address to bind; loopback by default.
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 picks a free one (read it back from ``KeyServiceMockServer/baseURL``).
    public var port: Int = 0
    /// The realm: the issuer is `{baseURL}/auth/realms/{realm}`.
    public var realm: String = "demo"
    /// Where the SQLite database, the pepper and the lock file live; `nil` keeps everything in memory.
    ///
    /// Only one server may use a state directory at a time: a second one fails to start.
    public var stateDirectory: URL? = nil
    /// The users the identity provider knows; `users[0]` is the one the authorization endpoint auto-approves.
    public var users: [MockUser] = [MockUser(username: "demo", password: "demo-password", subject: "demo-user")]
    /// The public clients the identity provider knows.
    public var clients: [MockClient] = [MockClient(clientId: "vault", redirectURIs: ["http://127.0.0.1/callback"])]
    /// Seconds an access token lives.
    public var accessTokenLifetime: TimeInterval = 300
    /// Seconds an id token lives.
    public var idTokenLifetime: TimeInterval = 300
    /// Seconds a refresh token lives (each rotation issues a token with a fresh lifetime).
    public var refreshTokenLifetime: TimeInterval = 30 * 86_400
    /// The clock every expiry is computed and checked with; inject a ``ManualClock`` in tests.
    public var now: @Sendable () -> Date = { Date() }
    /// Whether SIGINT and SIGTERM stop the server gracefully (for the `keyservice-mock` executable).
    ///
    /// Leave it off inside a test process: it takes over those signals for the whole process.
    public var stopsOnTerminationSignals: Bool = false

    /// The defaults: 127.0.0.1 on a free port, realm `demo`, in memory, user `demo`, client `vault`.
    public init() {}
}
