public import Foundation
public import Logging
public import VaultCrypto

/// Everything ``Auth`` and ``UserStorage`` need for one issuer and key service.
public struct VaultConfiguration: Sendable {
    /// The OpenID Connect issuer (in TIM deployments `{server}/auth/realms/{realm}`).
    public var issuer: URL
    /// The client's id at the issuer. Empty: none is configured, and the first OpenID Connect login registers the
    /// client at the issuer's registration endpoint (RFC 7591) as ``registration`` says; the registration is sealed
    /// with the refresh token, so later logins use it.
    public var clientId: String
    /// How a configuration without a client id registers the client (RFC 7591).
    public var registration: DynamicRegistration
    /// How the client authenticates at the token and revocation endpoints: ``ClientAuthentication/none`` (a
    /// public client, the default) or a confidential client's secret or private key.
    public var clientAuthentication: ClientAuthentication
    /// Where the issuer sends the user back: a loopback URL for command-line tools (`http://127.0.0.1/callback`:
    /// without a port one is chosen at each login, RFC 8252; with one, that port and the URI exactly as written),
    /// or an app's own scheme (then pass the redirect to ``Auth/handleRedirect(url:)``).
    public var redirectURI: URL
    /// The scopes asked for; `offline_access` is what makes the issuer hand out a refresh token.
    public var scopes: [String]
    /// The issuer's endpoints when they were discovered elsewhere (SMART on FHIR discovers them from the FHIR
    /// server); nil, the default, fetches the issuer's OpenID Connect discovery document.
    public var providerMetadata: ProviderMetadata?
    /// The key service's v1 base (`{realmBase}/keyservice/v1`); protocol v2 is served beside it
    /// (`{realmBase}/keyservice/v2`).
    public var keyServiceURL: URL
    /// The key-service protocol of new keys, made at registration and at every new password: ``KeyServiceVersion/v1``
    /// (TIM's, the default) or ``KeyServiceVersion/v2`` (OPRF: nothing derived from the password reaches the key
    /// service). A stored login opens with the protocol its envelope names, so choosing v2 moves each v1 login to v2
    /// at its next new password.
    public var keyServiceProtocol: KeyServiceVersion
    /// Where envelopes live; nil for `$XDG_DATA_HOME/credential-vault`.
    public var storeDirectory: URL?
    /// An access token is refreshed when it has less than this left (seconds), or less than a quarter of its
    /// lifetime when that is shorter (``Auth/getAccessToken(forceRefresh:)``). It is also the clock skew
    /// tolerated on an id_token's `exp`, `iat` and `nbf`, up to five minutes.
    public var leeway: TimeInterval
    /// Seconds to wait for any one HTTP answer.
    public var requestTimeout: TimeInterval
    /// Argon2id cost for new passwords.
    public var opsLimit: UInt64
    /// Argon2id memory for new passwords, in bytes.
    public var memLimitBytes: UInt64
    /// The fewest characters a new password may have; at least 1 (an empty password is always refused).
    /// Short PINs are reasonable: the key service locks the key after three wrong ones.
    public var minimumPasswordLength: Int
    /// The wall clock; tests pass their own.
    public var now: @Sendable () -> Date
    /// The device's monotonic clock (``ContinuousClock``, which counts on while the device sleeps), on which an
    /// access token's freshness is measured: from the moment its request was sent, for the lifetime the issuer
    /// stated, so a wall clock set minutes wrong neither refreshes at every call nor hands out an expired token.
    /// Tests pass their own.
    public var monotonicNow: @Sendable () -> ContinuousClock.Instant
    /// How the library waits between polls of a device login (RFC 8628: the issuer's `interval`, in whole seconds):
    /// `Task.sleep` by default, throwing when the task is cancelled. Tests pass their own, which records the waits
    /// asked for and returns at once.
    public var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    /// Where the library says what it does: requests and decisions at debug, never a secret or a body.
    public var logger: Logger
    /// Certificate authorities trusted for https besides the system's, or instead of them when pinned; nil for the
    /// system's alone. Used by the default transport (``DefaultHTTPTransport``) on Linux; on Apple platforms extra
    /// roots are not used and pinned ones make every request fail (see ``DefaultHTTPTransport``).
    public var trustRoots: TrustRoots?
    /// When a login binds its tokens to a key (DPoP, RFC 9449): ``DPoPSetting/whenOffered`` (the default) when the
    /// issuer lists ES256 in `dpop_signing_alg_values_supported`, ``DPoPSetting/always`` or ``DPoPSetting/never``.
    /// A stored login keeps what it was made with: its key is sealed beside its refresh token.
    public var dpop: DPoPSetting = .whenOffered
    /// Where the issuer sends the browser after an RP-initiated logout (`post_logout_redirect_uri`, OpenID Connect
    /// RP-Initiated Logout 1.0): it must be registered for the client. Nil (the default) sends none; the issuer then
    /// shows its own page.
    public var postLogoutRedirectURI: URL?
    /// `max_age` of the authorization request (OpenID Connect Core 1.0 section 3.1.2.1), in whole seconds: the
    /// user must have authenticated at the issuer at most this long ago (0: now, a step-up). The id token must
    /// then carry `auth_time`, which is checked against it with the leeway; a login that is older fails with
    /// ``VaultError/Kind/authenticationTooOld``. Nil (the default) sends none.
    public var maxAge: Int?
    /// `acr_values` of the authorization request: the authentication context classes asked for, in order of
    /// preference (such as a second factor); empty (the default) sends none.
    public var acrValues: [String]
    /// `login_hint` of the authorization request: who is logging in (an email or user name the issuer fills
    /// in); nil (the default) sends none.
    public var loginHint: String?
    /// Extra parameters of every authorization request (as kubelogin's `--oidc-auth-request-extra-params`). They
    /// never replace the standard ones (`client_id`, `redirect_uri`, `state`, PKCE, ...); those of a call
    /// (``Auth/performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)``)
    /// win over these. A `max_age` given here is checked as ``maxAge`` is.
    public var authorizationParameters: [String: String]

    /// The scopes asked for by default: `openid offline_access`.
    public static let defaultScopes = ["openid", "offline_access"]
    /// The redirect URI by default: a loopback listener on 127.0.0.1 at a port chosen at login.
    public static let defaultRedirectURI = URL(string: "http://127.0.0.1/callback")!
    /// Seconds to wait for any one HTTP answer, by default.
    public static let defaultRequestTimeout: TimeInterval = 15
    /// Seconds before expiry an access token is refreshed, by default.
    public static let defaultLeeway: TimeInterval = 60

    /// A configuration; without a client id the client registers at its first login (RFC 7591); `scopes` default to `openid offline_access`, the leeway to 60 seconds, the logger to
    /// swift-log's label `credential-vault`.
    public init(
        issuer: URL,
        clientId: String = "",
        clientAuthentication: ClientAuthentication = .none,
        registration: DynamicRegistration = DynamicRegistration(),
        redirectURI: URL = defaultRedirectURI,
        scopes: [String] = defaultScopes,
        keyServiceURL: URL,
        storeDirectory: URL? = nil,
        leeway: TimeInterval = defaultLeeway,
        requestTimeout: TimeInterval = defaultRequestTimeout,
        opsLimit: UInt64 = Argon2idParameters.defaultOpsLimit,
        memLimitBytes: UInt64 = Argon2idParameters.defaultMemLimitBytes,
        minimumPasswordLength: Int = 1,
        now: @escaping @Sendable () -> Date = { Date() },
        monotonicNow: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        logger: Logger = Logger(label: "credential-vault")
    ) {
        self.issuer = issuer
        self.clientId = clientId
        self.clientAuthentication = clientAuthentication
        self.registration = registration
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.providerMetadata = nil
        self.keyServiceURL = keyServiceURL
        self.keyServiceProtocol = .v1
        self.storeDirectory = storeDirectory
        self.leeway = leeway
        self.requestTimeout = requestTimeout
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.minimumPasswordLength = minimumPasswordLength
        self.now = now
        self.monotonicNow = monotonicNow
        self.logger = logger
        self.trustRoots = nil
        self.postLogoutRedirectURI = nil
        self.maxAge = nil
        self.acrValues = []
        self.loginHint = nil
        self.authorizationParameters = [:]
    }

    /// A TIM-style configuration: issuer `{server}/auth/realms/{realm}`, key service below it.
    public init(server: URL, realm: String, clientId: String) {
        let issuer = TIMLayout.issuer(server: server, realm: realm)
        self.init(issuer: issuer, clientId: clientId, keyServiceURL: TIMLayout.keyServiceURL(issuer: issuer))
    }
}
