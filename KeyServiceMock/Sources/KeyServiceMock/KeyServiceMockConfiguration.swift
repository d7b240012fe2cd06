public import Foundation
public import Logging

/// How a ``KeyServiceMockServer`` listens, what it keeps, whom it knows and where it logs.
public struct KeyServiceMockConfiguration: Sendable {
    /// The address to bind; loopback by default.
    ///
    /// Anything but a loopback address (127.0.0.0/8 or ::1, parsed as an address; not a name such as
    /// `localhost`) is refused unless ``allowsNonLoopbackHost`` is set.
    public var host: String = "127.0.0.1"
    /// Whether ``host`` may be an address other servers and people can reach; off by default.
    ///
    /// The mock is for tests and demos: on a reachable address anyone can create keys and guess secrets,
    /// and every user's password is in the configuration.
    public var allowsNonLoopbackHost: Bool = false
    /// The port to bind; 0 picks a free one (read it back from ``KeyServiceMockServer/baseURL``).
    public var port: Int = 0
    /// The realm: the issuer is `{baseURL}/auth/realms/{realm}`.
    public var realm: String = "demo"
    /// Where the SQLite database, the pepper, the signing key and the lock file live; `nil` keeps
    /// everything in memory.
    ///
    /// Created with mode 0700 when missing; an existing directory must be 0700 and owned by this user, or
    /// the server does not start. Only one server may use a state directory at a time: a second one fails
    /// to start.
    public var stateDirectory: URL? = nil
    /// The most keys one client may create (`createkey` answers 429 beyond it): 10,000 by default.
    ///
    /// The key service has no client identity, so a client is a remote IP address: an IPv4 address, or an
    /// IPv6 /64 network. Every process on this machine, and every client behind one NAT, is one client.
    /// Keys are never evicted (a locked key answers 204 for good), so the limit counts every key created.
    public var maximumKeysPerClient: Int = 10_000
    /// The most keys the server holds in all (`createkey` answers 507 beyond it): 100,000 by default,
    /// some 30 MB of SQLite.
    public var maximumKeys: Int = 100_000
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
    /// The SMART on FHIR mode (``SMARTMode``); `nil`, the default, leaves it off and the server as it was.
    ///
    /// When set, the server also serves a FHIR base at ``KeyServiceMockServer/fhirBase`` with SMART discovery,
    /// the authorization endpoint requires `aud` and takes EHR launch ids, token responses carry launch
    /// context, and access tokens are opaque (the FHIR endpoint knows them; they are not JWTs).
    public var smart: SMARTMode? = nil
    /// Whether the identity provider takes OAuth 2.0 Dynamic Client Registration (RFC 7591) and its management
    /// protocol (RFC 7592); `false` by default.
    ///
    /// When on, discovery (and the SMART mode's smart-configuration and CapabilityStatement) name the registration
    /// endpoint, `{issuer}/clients-registrations/openid-connect`; anyone may register a public (`none`),
    /// `client_secret_basic`, `client_secret_post` or `private_key_jwt` client there, and the token, revocation
    /// and introspection endpoints then enforce each registered client's method. Registrations are kept in memory
    /// only, even with a ``stateDirectory``.
    public var dynamicRegistration: Bool = false
    /// Whether discovery names a revocation endpoint (RFC 7009); `true` by default. Off, the server behaves like an
    /// issuer that offers no revocation (the route still answers, but no client is told of it).
    public var offersRevocation: Bool = true
    /// DPoP (RFC 9449, ``DPoPMode``); nil, the default, leaves it off: discovery lists no DPoP algorithm and proofs
    /// are ignored.
    public var dpop: DPoPMode? = nil
    /// The device authorization grant (RFC 8628, ``DeviceFlowMode``); nil, the default, leaves it off: discovery
    /// lists no `device_authorization_endpoint` and the grant type is refused.
    public var deviceFlow: DeviceFlowMode? = nil
    /// How long before a code-flow or device login the user is said to have authenticated: the id token's `auth_time` is
    /// that much before the session starts. 0 by default (the user authenticates at each login). A test sets it
    /// to play an issuer whose single sign-on session is older than a client's `max_age` and that did not ask
    /// the user again.
    public var authenticationAge: TimeInterval = 0
    /// The clock every expiry is computed and checked with; inject a ``ManualClock`` in tests.
    public var now: @Sendable () -> Date = { Date() }
    /// Whether SIGINT and SIGTERM stop the server gracefully (for the `keyservice-mock` executable).
    ///
    /// Leave it off inside a test process: it takes over those signals for the whole process.
    public var stopsOnTerminationSignals: Bool = false
    /// Serve https with this certificate and key instead of plain http; nil (the default) for plain http.
    public var tls: ServerTLS? = nil
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
    /// 10,000 keys per client and 100,000 in all, warnings and errors logged, the SMART mode and dynamic
    /// registration off.
    public init() {}
}
