/// Every error the public API throws.
///
/// Ask the questions (``isWrongPassword``, ``isKeyLocked``, ``isNetworkError``, ...) rather than
/// matching kinds: a question keeps its answer when kinds are added. ``Kind`` is a struct of static
/// values, not an enum, so a new kind never breaks a caller's `switch` (the shape of jwt-kit's
/// `JWTError`). ``description`` says what happened and what to do, in words; it never contains a
/// password, key, secret or token.
public struct VaultError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for matching (`error.kind == .keyMissing`). New kinds may be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case wrongPassword
            case keyLocked
            case keyLockedHere
            case keyMissing
            case serverRefused
            case unexpectedAnswer
            case unreachable
            case timedOut
            case insecureURL
            case invalidConfiguration
            case discoveryFailed
            case notRegistered
            case notLoggedIn
            case loginExpired
            case noRefreshToken
            case openIDConnectFailed
            case revocationFailed
            case deviceUnlockFailed
            case permissionsTooOpen
            case wrongOwner
            case unsupportedFormat
            case damagedRecord
            case fileSystemFailed
            case envelopeDidNotOpen
            case wrongKey
            case invalidUserId
            case lockTimeout
            case cryptoFailed
            case cancelled
            case bindingMismatch
            case invalidPassword
            case noUnlockedEnvelope
            case accessDenied
            case registrationFailed
            case authenticationTooOld
            case resourceRefused
            case authorizationDenied
            case deviceCodeExpired
        }

        let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The key service refused the secret derived from the password (HTTP 401); the key is not locked yet.
        public static let wrongPassword = Self(.wrongPassword)
        /// The key is locked after three wrong passwords in a row (HTTP 204 or 403, or the third 401).
        public static let keyLocked = Self(.keyLocked)
        /// The third wrong password in a row on this device: the key service locks the key on the third, so it
        /// is most likely locked now. What this device knows, not the key service's word (``keyLocked``).
        public static let keyLockedHere = Self(.keyLockedHere)
        /// The key service does not know the envelope's key (HTTP 404).
        public static let keyMissing = Self(.keyMissing)
        /// A server answered with an HTTP status that is an error and has no meaning of its own here.
        public static let serverRefused = Self(.serverRefused)
        /// A server answered 200 with a body that is not what the protocol says.
        public static let unexpectedAnswer = Self(.unexpectedAnswer)
        /// No HTTP answer came back: refused, dropped, not resolvable.
        public static let unreachable = Self(.unreachable)
        /// No HTTP answer came back in the time allowed.
        public static let timedOut = Self(.timedOut)
        /// A URL that would send secrets in clear: not https, and not a loopback address.
        public static let insecureURL = Self(.insecureURL)
        /// The configuration is not usable (see the description).
        public static let invalidConfiguration = Self(.invalidConfiguration)
        /// The issuer's discovery documents are missing or unusable.
        public static let discoveryFailed = Self(.discoveryFailed)
        /// No refresh token is stored for the user: the first login (OpenID Connect) has not happened here.
        public static let notRegistered = Self(.notRegistered)
        /// No session is open: log in first.
        public static let notLoggedIn = Self(.notLoggedIn)
        /// The issuer no longer accepts the refresh token (`invalid_grant`): expired or revoked.
        public static let loginExpired = Self(.loginExpired)
        /// The token endpoint gave no refresh token where one was needed.
        public static let noRefreshToken = Self(.noRefreshToken)
        /// The OpenID Connect login failed: forged or error redirect, refused code, bad id token, cancelled.
        public static let openIDConnectFailed = Self(.openIDConnectFailed)
        /// The issuer did not revoke the refresh token at logout; local data was cleared as asked.
        public static let revocationFailed = Self(.revocationFailed)
        /// Device unlock is off for the user, or its secret no longer opens the key.
        public static let deviceUnlockFailed = Self(.deviceUnlockFailed)
        /// The store directory or a file in it is readable or writable by other users.
        public static let permissionsTooOpen = Self(.permissionsTooOpen)
        /// The store directory or a file in it belongs to another user.
        public static let wrongOwner = Self(.wrongOwner)
        /// A stored record of a format this version cannot read (written by a newer version); left untouched.
        public static let unsupportedFormat = Self(.unsupportedFormat)
        /// A stored record that is not what it should be (damaged, or another user's); left untouched.
        public static let damagedRecord = Self(.damagedRecord)
        /// A file-system call failed.
        public static let fileSystemFailed = Self(.fileSystemFailed)
        /// The envelope did not open with the key the password gave: it was changed or belongs to another key.
        public static let envelopeDidNotOpen = Self(.envelopeDidNotOpen)
        /// The key service returned a key of the wrong size or for another key id.
        public static let wrongKey = Self(.wrongKey)
        /// The user id is empty or longer than 1024 bytes of UTF-8.
        public static let invalidUserId = Self(.invalidUserId)
        /// Another process held the store's lock for longer than the wait allows.
        public static let lockTimeout = Self(.lockTimeout)
        /// Key derivation or encryption failed (usually: not enough memory for the envelope's Argon2id cost).
        public static let cryptoFailed = Self(.cryptoFailed)
        /// The stored login belongs to another issuer, client or key service than the configuration names.
        public static let bindingMismatch = Self(.bindingMismatch)
        /// The password is empty, or a new password is shorter than the configured minimum.
        public static let invalidPassword = Self(.invalidPassword)
        /// The session keeps no unlocked envelope to work with (a login with `storeNewRefreshToken: false`, or an
        /// OpenID Connect login before a password was set).
        public static let noUnlockedEnvelope = Self(.noUnlockedEnvelope)
        /// A resource server refused the access token for this request (HTTP 403): its scope does not cover it.
        public static let accessDenied = Self(.accessDenied)
        /// The issuer refused to register the client, or to update or delete its registration (RFC 7591, RFC 7592),
        /// or offers no registration endpoint to a configuration without a client id.
        public static let registrationFailed = Self(.registrationFailed)
        /// The issuer's id token says the user authenticated longer ago than the login's `max_age` allows (its
        /// `auth_time`), or does not say when: a step-up that did not happen. Log in again.
        public static let authenticationTooOld = Self(.authenticationTooOld)
        /// The issuer refused to issue a token for the resource or audience asked for (RFC 8707 `invalid_target`), or
        /// the resource is not an absolute URL without a fragment.
        public static let resourceRefused = Self(.resourceRefused)
        /// The user denied a device login at the issuer (RFC 8628 `access_denied`); nothing was stored.
        public static let authorizationDenied = Self(.authorizationDenied)
        /// A device login's code expired before the user approved it (RFC 8628 `expired_token`, or its `expires_in`
        /// passed, or the polls allowed ran out); nothing was stored. Start again.
        public static let deviceCodeExpired = Self(.deviceCodeExpired)
        /// The task was cancelled while it waited.
        public static let cancelled = Self(.cancelled)

        /// The kind's name, such as `keyMissing`.
        public var description: String { base.rawValue }
    }

    /// The party an error came from, for ``isKeyServiceError``.
    package enum Origin: Sendable {
        case keyService
        case issuer
        case store
        case local
    }

    /// What went wrong.
    public let kind: Kind
    /// What happened and what to do, in words; never a secret.
    public let reason: String
    /// The host that failed to answer or answered wrongly, when a server was involved.
    public let host: String?
    /// The HTTP status of the answer, when one came.
    public let httpStatus: Int?
    let origin: Origin

    init(_ kind: Kind, _ reason: String, origin: Origin, host: String? = nil, httpStatus: Int? = nil) {
        self.kind = kind
        self.reason = reason
        self.origin = origin
        self.host = host
        self.httpStatus = httpStatus
    }

    /// An error of `kind`, for implementations of ``KeyService``, ``HTTPTransport`` or ``DeviceSecretStore``.
    /// - Parameters:
    ///   - kind: what went wrong, the value callers match.
    ///   - reason: what happened and what to do, in words; never a secret.
    ///   - host: the host the failure concerns, when there is one.
    ///   - httpStatus: the HTTP status of the answer, when one came.
    public init(_ kind: Kind, reason: String, host: String? = nil, httpStatus: Int? = nil) {
        self.init(kind, reason, origin: .local, host: host, httpStatus: httpStatus)
    }

    /// The same error, attributed to `origin` (the library knows which party it called).
    func attributed(to origin: Origin) -> VaultError {
        VaultError(kind, reason, origin: origin, host: host, httpStatus: httpStatus)
    }

    /// What happened and what to do; never a password, key, secret or token.
    public var description: String { reason }

    // MARK: Questions (THP's names first)

    /// The key service said the password is wrong (HTTP 401). Fewer than three wrong passwords in a row so far.
    public var isWrongPassword: Bool { kind == .wrongPassword }

    /// The key is locked after three wrong passwords in a row; only a new login and a new password help.
    ///
    /// True when the key service said so, and also for the third wrong password in a row seen on this device
    /// (THP's behaviour: the key service locks on that one). ``isKeyLockConfirmed`` tells the two apart.
    public var isKeyLocked: Bool { kind == .keyLocked || kind == .keyLockedHere }

    /// The key service itself answered that the key is locked (TIM: HTTP 204 or 403). Decide to give up on a
    /// login (delete it, say) on this, never on this device's count alone.
    public var isKeyLockConfirmed: Bool { kind == .keyLocked }

    /// Any failure that came from the key service, network failures reaching it included.
    public var isKeyServiceError: Bool { origin == .keyService }

    /// Device unlock (THP's biometric login) is not enabled, or its secret no longer opens the key.
    public var isDeviceUnlockFailed: Bool { kind == .deviceUnlockFailed }

    /// The issuer or the key service could not be reached, or did not answer in time; retrying later may help.
    public var isNetworkError: Bool { kind == .unreachable || kind == .timedOut }

    /// The issuer no longer accepts the stored login (the refresh token expired or was revoked): log in again
    /// with OpenID Connect.
    public var isLoginExpired: Bool { kind == .loginExpired }

    /// No login is stored for the user: the first login (OpenID Connect) and a password are needed.
    public var isNotRegistered: Bool { kind == .notRegistered }

    /// The configuration is unusable: an insecure or wrong URL, an issuer whose discovery fails, a bad setting, a
    /// client the issuer will not register.
    public var isConfigurationError: Bool {
        kind == .insecureURL || kind == .invalidConfiguration || kind == .discoveryFailed || kind == .bindingMismatch
            || kind == .registrationFailed
    }

    /// A resource server refused the request although the access token is valid (HTTP 403): the granted scope
    /// does not cover it. Logging in again with a wider scope may help; retrying does not.
    public var isAccessDenied: Bool { kind == .accessDenied }

    /// The user denied the device login at the issuer (RFC 8628 `access_denied`): starting again helps only if that
    /// was a mistake.
    public var isAuthorizationDenied: Bool { kind == .authorizationDenied }

    /// The device login's code expired before the user approved it (RFC 8628 `expired_token`): start again.
    public var isDeviceCodeExpired: Bool { kind == .deviceCodeExpired }

    /// Another process held a lock on the store (or on the embedded key service) for longer than the wait
    /// allows; retrying later may help.
    public var isLockTimeout: Bool { kind == .lockTimeout }

    /// The local store refused or failed: permissions, ownership, a damaged or newer record, a file-system call.
    public var isStorageError: Bool { origin == .store }
}
