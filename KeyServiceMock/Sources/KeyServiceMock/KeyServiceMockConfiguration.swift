public import Foundation
public import Logging

/// How a ``KeyServiceMockServer`` listens, what it keeps, whom it knows and where it logs.
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
    /// The logger the server and its HTTP stack write to; its level decides what is written.
    ///
    /// At `.debug` every request and every decision is logged (key granted, wrong secret 2 of 3, key
    /// locked, token issued, refresh-token reuse, ...); at `.error` a request that failed inside the
    /// server. No line carries a secret, key, token, code, password or a request or response body.
    /// The default is labelled `keyservice-mock`, goes to the `LoggingSystem`'s handler, and writes
    /// nothing below `.warning`.
    public var logger: Logger = {
        var logger = Logger(label: "keyservice-mock")
        logger.logLevel = .warning
        return logger
    }()

    /// The defaults: 127.0.0.1 on a free port, realm `demo`, in memory, user `demo`, client `vault`,
    /// warnings and errors logged.
    public init() {}
}
