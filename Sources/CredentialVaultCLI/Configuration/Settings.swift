import CredentialVault
import Foundation
import Synchronization

/// The effective configuration: flags, then environment variables, then the config file, then defaults.
struct Settings {
    /// The client id `credential-vault` uses when none is configured: the one the embedded KeyServiceMock knows.
    static let defaultClientId = "vault"
    /// The scopes a SMART launch asks for when none are configured.
    static let defaultSMARTScopes = ["launch/patient", "openid", "fhirUser", "offline_access", "patient/*.rs"]

    /// One configurable value: its flag, environment variable and config-file key.
    struct Key {
        let name: String
        let flag: String?
        let environment: String
        let fileKey: String
        let help: String
    }

    static let issuerKey = Key(
        name: "issuer",
        flag: "issuer",
        environment: "CREDENTIAL_VAULT_ISSUER",
        fileKey: "issuer",
        help: "OpenID Connect issuer"
    )
    static let clientIdKey = Key(
        name: "client-id",
        flag: "client-id",
        environment: "CREDENTIAL_VAULT_CLIENT_ID",
        fileKey: "clientId",
        help: "client id (empty: register the client at the server, RFC 7591)"
    )
    static let keyServiceKey = Key(
        name: "key-service",
        flag: "key-service",
        environment: "CREDENTIAL_VAULT_KEY_SERVICE",
        fileKey: "keyService",
        help: "key service v1 base URL"
    )
    static let storeKey = Key(
        name: "store",
        flag: "store",
        environment: "CREDENTIAL_VAULT_STORE",
        fileKey: "store",
        help: "directory of encrypted logins"
    )
    static let userKey = Key(
        name: "user",
        flag: "user",
        environment: "CREDENTIAL_VAULT_USER",
        fileKey: "user",
        help: "user to act for"
    )
    static let scopesKey = Key(
        name: "scopes",
        flag: nil,
        environment: "CREDENTIAL_VAULT_SCOPES",
        fileKey: "scopes",
        help: "scopes asked for at registration"
    )
    static let redirectURIKey = Key(
        name: "redirect-uri",
        flag: nil,
        environment: "CREDENTIAL_VAULT_REDIRECT_URI",
        fileKey: "redirectURI",
        help: "redirect URI (loopback: port chosen at login)"
    )
    static let postLogoutRedirectURIKey = Key(
        name: "post-logout-redirect-uri",
        flag: nil,
        environment: "CREDENTIAL_VAULT_POST_LOGOUT_REDIRECT_URI",
        fileKey: "postLogoutRedirectURI",
        help: "where the issuer sends the browser after logout's end-session URL (registered for the client)"
    )
    static let authParamsKey = Key(
        name: "auth-params",
        flag: "auth-param",
        environment: "CREDENTIAL_VAULT_AUTH_PARAMS",
        fileKey: "authParams",
        help: "extra authorization request parameters, key=value"
    )
    static let maxAgeKey = Key(
        name: "max-age",
        flag: "max-age",
        environment: "CREDENTIAL_VAULT_MAX_AGE",
        fileKey: "maxAge",
        help: "max_age of the login (seconds); the id token's auth_time is checked"
    )
    static let acrValuesKey = Key(
        name: "acr-values",
        flag: "acr-values",
        environment: "CREDENTIAL_VAULT_ACR_VALUES",
        fileKey: "acrValues",
        help: "acr_values of the login"
    )
    static let loginHintKey = Key(
        name: "login-hint",
        flag: "login-hint",
        environment: "CREDENTIAL_VAULT_LOGIN_HINT",
        fileKey: "loginHint",
        help: "login_hint of the login"
    )
    static let timeoutKey = Key(
        name: "timeout",
        flag: nil,
        environment: "CREDENTIAL_VAULT_TIMEOUT",
        fileKey: "timeout",
        help: "seconds to wait for one HTTP answer"
    )
    static let clientSecretFileKey = Key(
        name: "client-secret-file",
        flag: "client-secret-file",
        environment: "CREDENTIAL_VAULT_CLIENT_SECRET_FILE",
        fileKey: "clientSecretFile",
        help: "a confidential client's secret, in a file only you can read (0600)"
    )
    static let clientKeyFileKey = Key(
        name: "client-key-file",
        flag: "client-key-file",
        environment: "CREDENTIAL_VAULT_CLIENT_KEY_FILE",
        fileKey: "clientKeyFile",
        help: "a confidential client's private key (PEM) for private_key_jwt, in a file only you can read (0600)"
    )
    static let clientKeyIdKey = Key(
        name: "client-key-id",
        flag: "client-key-id",
        environment: "CREDENTIAL_VAULT_CLIENT_KEY_ID",
        fileKey: "clientKeyId",
        help: "the kid the server knows the client key by, sent in each private_key_jwt assertion"
    )
    static let clientAssertionAudienceKey = Key(
        name: "client-assertion-audience",
        flag: nil,
        environment: "CREDENTIAL_VAULT_CLIENT_ASSERTION_AUDIENCE",
        fileKey: "clientAssertionAudience",
        help: "aud of a private_key_jwt assertion at every endpoint: tokenEndpoint (the default) or issuer"
    )
    static let clientAuthKey = Key(
        name: "client-auth",
        flag: nil,
        environment: "CREDENTIAL_VAULT_CLIENT_AUTH",
        fileKey: "clientAuth",
        help: "client_secret_basic or client_secret_post (default: what discovery lists)"
    )
    static let fhirKey = Key(
        name: "fhir",
        flag: "fhir",
        environment: "CREDENTIAL_VAULT_FHIR",
        fileKey: "fhir",
        help: "SMART on FHIR server's base URL (the login is a SMART launch there)"
    )
    static let caFileKey = Key(
        name: "ca-file",
        flag: "ca-file",
        environment: "CREDENTIAL_VAULT_CA_FILE",
        fileKey: "caFile",
        help: "certificate authorities (PEM) trusted for https besides the system's (default: SSL_CERT_FILE, alone)"
    )
    static let keyServiceProtocolKey = Key(
        name: "key-service-protocol",
        flag: nil,
        environment: "CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL",
        fileKey: "keyServiceProtocol",
        help: "v1 (TIM's, the default) or v2 (OPRF) for new passwords; a stored login keeps its own"
    )
    static let allKeys = [
        fhirKey, issuerKey, clientIdKey, keyServiceKey, storeKey, userKey, scopesKey, redirectURIKey,
        postLogoutRedirectURIKey, authParamsKey, maxAgeKey, acrValuesKey, loginHintKey, timeoutKey,
        clientSecretFileKey, clientKeyFileKey, clientKeyIdKey, clientAssertionAudienceKey, clientAuthKey, caFileKey,
        keyServiceProtocolKey,
    ]

    let configFile: Setting
    /// The profile: `--profile`, `CREDENTIAL_VAULT_PROFILE`; unset for the default profile (the config file's top
    /// level). A named profile's keys override the top level's; flags and variables override both.
    let profile: Setting
    let fhir: Setting
    let issuer: Setting
    let clientId: Setting
    let keyService: Setting
    let store: Setting
    let user: Setting
    let scopes: Setting
    let redirectURI: Setting
    /// The `post_logout_redirect_uri` of logout's end-session URL; unset sends none.
    let postLogoutRedirectURI: Setting
    /// Extra authorization parameters, `key=value`, one a line (flags; the environment's separated by spaces too).
    let authParams: Setting
    /// `max_age`, `acr_values` and `login_hint` of the login.
    let maxAge: Setting
    let acrValues: Setting
    let loginHint: Setting
    let timeout: Setting
    let clientSecretFile: Setting
    let clientKeyFile: Setting
    /// The `kid` of the client key's assertions: `--client-key-id`, `CREDENTIAL_VAULT_CLIENT_KEY_ID`, `clientKeyId`.
    let clientKeyId: Setting
    /// The `aud` of the client key's assertions: `tokenEndpoint` (the default) or `issuer`.
    let clientAssertionAudience: Setting
    let clientAuth: Setting
    /// The CA file (PEM) trusted for https: `--ca-file`, `CREDENTIAL_VAULT_CA_FILE`, `caFile`, else `SSL_CERT_FILE`.
    let caFile: Setting

    /// The key-service protocol of new passwords: `v1` (the default) or `v2`.
    let keyServiceProtocol: Setting

    /// Whether the CA file replaces the system's authorities: only `SSL_CERT_FILE` does, as it does for OpenSSL and
    /// curl; every other source adds to them.
    var caFileReplacesSystemRoots: Bool { caFile.source == .environment("SSL_CERT_FILE") }

    /// The store of a named profile that names none (``Paths/profileStore(_:in:)``); nil otherwise.
    var profileDefaultStore: URL? {
        guard let name = profile.value, store.source == .derived(Self.profileStoreSource(name)) else { return nil }
        return store.value.map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    /// What a named profile's own store is derived from.
    private static func profileStoreSource(_ name: String) -> String { "the profile \(name)" }

    /// True when neither an issuer nor a key service is configured: `credential-vault` then runs its own KeyServiceMock.
    var isEmbedded: Bool { issuer.value == nil && keyService.value == nil }

    /// Resolves every setting; throws ``CLIError`` (configuration) for an unreadable or unknown config file, or
    /// one that others can write (``ConfigFile/contents(atPath:required:)``).
    init(options: ConnectionOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let (configFile, required) = Self.configFileSetting(options: options, environment: environment)
        let filePath = configFile.value ?? ""
        self.configFile = configFile
        let contents = try Self.readConfigFile(filePath, required: required)
        let profile = try Self.selectedProfile(options: options, environment: environment)
        self.profile = profile
        let named: ConfigProfile?
        if let name = profile.value {
            guard let found = contents.profiles[name] else {
                let known = contents.profileNames
                throw CLIError.configuration(
                    "no profile '\(name)' (\(profile.source)) in the config file \(filePath); "
                        + (known.isEmpty
                            ? "it has none (profiles go in its \"profiles\" object)"
                            : "its profiles: " + known.joined(separator: ", "))
                )
            }
            named = found
        } else {
            named = nil
        }

        func resolve(_ key: Key, flag: String?) -> Setting {
            if let flag, let name = key.flag { return Setting(value: flag, source: .flag(name)) }
            if let (name, value) = Self.environmentValue(key.environment, in: environment) {
                return Setting(value: value, source: .environment(name))
            }
            if let name = profile.value, let value = named?.values[key.fileKey] {
                return Setting(value: value, source: .profile(name, file: filePath))
            }
            // A profile at an issuer (or FHIR server) of its own takes none of the top level's issuer-bound keys:
            // the top level's client secret or key must never go to another issuer's token endpoint.
            let ownServer = named?.values[Self.issuerKey.fileKey] != nil || named?.values[Self.fhirKey.fileKey] != nil
            if let value = contents.topLevel.values[key.fileKey],
                !(ownServer && Self.issuerBoundFileKeys.contains(key.fileKey))
            {
                return Setting(value: value, source: .file(filePath))
            }
            return Setting(value: nil, source: .unset)
        }

        fhir = resolve(Self.fhirKey, flag: options.fhir)
        issuer = resolve(Self.issuerKey, flag: options.issuer)
        let clientId = resolve(Self.clientIdKey, flag: options.clientId)
        self.clientId = clientId.value == nil ? Setting(value: Self.defaultClientId, source: .builtIn) : clientId
        let keyService = resolve(Self.keyServiceKey, flag: options.keyService)
        if keyService.value == nil, let issuer = issuer.value {
            let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            let derived = URL(string: trimmed).map { TIMLayout.keyServiceURL(issuer: $0).absoluteString }
            self.keyService = Setting(value: derived ?? trimmed, source: .derived("the issuer"))
        } else {
            self.keyService = keyService
        }
        let embedded = issuer.value == nil && keyService.value == nil
        let store = resolve(Self.storeKey, flag: options.store)
        let storeIsTheProfilesOwn: Bool =
            switch store.source {
            case .flag, .profile: true
            default: false
            }
        if let name = profile.value, !storeIsTheProfilesOwn {
            // A named profile without a store of its own (`--store` or its own `store`) keeps its logins in a
            // directory of its own under the store it would inherit, so that two profiles never share a login.
            let inherited = store.value.map { URL(fileURLWithPath: $0, isDirectory: true) }
            let base =
                inherited
                ?? (embedded
                    ? Paths.embeddedStore(environment: environment) : Paths.defaultStore(environment: environment))
            self.store = Setting(
                value: Paths.profileStore(name, in: base).path,
                source: .derived(Self.profileStoreSource(name))
            )
        } else if store.value != nil {
            self.store = store
        } else if embedded {
            self.store = Setting(value: Paths.embeddedStore(environment: environment).path, source: .embedded)
        } else {
            self.store = Setting(value: Paths.defaultStore(environment: environment).path, source: .builtIn)
        }
        user = resolve(Self.userKey, flag: options.user)
        let scopes = resolve(Self.scopesKey, flag: nil)
        // A SMART launch asks, by default, for the patient in context, the user's identity, a refresh token, and
        // reading and searching the patient's data.
        let defaultScopes = fhir.value == nil ? VaultConfiguration.defaultScopes : Self.defaultSMARTScopes
        self.scopes =
            scopes.value == nil ? Setting(value: defaultScopes.joined(separator: " "), source: .builtIn) : scopes
        let redirect = resolve(Self.redirectURIKey, flag: nil)
        redirectURI =
            redirect.value == nil
            ? Setting(value: VaultConfiguration.defaultRedirectURI.absoluteString, source: .builtIn) : redirect
        postLogoutRedirectURI = resolve(Self.postLogoutRedirectURIKey, flag: nil)
        authParams = resolve(
            Self.authParamsKey,
            flag: options.authParams.isEmpty ? nil : options.authParams.joined(separator: "\n")
        )
        maxAge = resolve(Self.maxAgeKey, flag: options.maxAge)
        acrValues = resolve(Self.acrValuesKey, flag: options.acrValues)
        loginHint = resolve(Self.loginHintKey, flag: options.loginHint)
        let timeout = resolve(Self.timeoutKey, flag: nil)
        self.timeout =
            timeout.value == nil
            ? Setting(value: "\(Int(VaultConfiguration.defaultRequestTimeout))", source: .builtIn) : timeout
        clientSecretFile = resolve(Self.clientSecretFileKey, flag: options.clientSecretFile)
        clientKeyFile = resolve(Self.clientKeyFileKey, flag: options.clientKeyFile)
        clientKeyId = resolve(Self.clientKeyIdKey, flag: options.clientKeyId)
        clientAssertionAudience = resolve(Self.clientAssertionAudienceKey, flag: nil)
        clientAuth = resolve(Self.clientAuthKey, flag: nil)
        let keyServiceProtocol = resolve(Self.keyServiceProtocolKey, flag: nil)
        self.keyServiceProtocol =
            keyServiceProtocol.value == nil ? Setting(value: "v1", source: .builtIn) : keyServiceProtocol
        let caFile = resolve(Self.caFileKey, flag: options.caFile)
        if caFile.value == nil, let path = environment["SSL_CERT_FILE"], !path.isEmpty {
            self.caFile = Setting(value: path, source: .environment("SSL_CERT_FILE"))
        } else {
            self.caFile = caFile
        }
    }

    /// The rows `credential-vault config` prints, in a fixed order.
    var rows: [(name: String, setting: Setting)] {
        [
            ("profile", profile.value == nil ? Setting(value: nil, source: .builtIn) : profile),
            ("fhir", fhir),
            ("issuer", isEmbedded ? Setting(value: nil, source: .embedded) : issuer),
            ("key-service", isEmbedded ? Setting(value: nil, source: .embedded) : keyService),
            ("client-id", clientId),
            ("store", store),
            ("user", user),
            ("scopes", scopes),
            ("redirect-uri", redirectURI),
            ("post-logout-redirect-uri", postLogoutRedirectURI),
            ("auth-params", authParams),
            ("max-age", maxAge),
            ("acr-values", acrValues),
            ("login-hint", loginHint),
            ("timeout", timeout),
            ("client-secret-file", clientSecretFile),
            ("client-key-file", clientKeyFile),
            ("client-key-id", clientKeyId),
            ("client-assertion-audience", clientAssertionAudience),
            ("client-auth", clientAuth),
            ("ca-file", caFile),
            ("key-service-protocol", keyServiceProtocol),
            ("config-file", configFile),
        ]
    }

    /// The old names of the variables, from when the tool was called `credential-vault`: read when the new name is unset, with a
    /// note once per name (`CREDENTIAL_VAULT_ISSUER` for `CREDENTIAL_VAULT_ISSUER`).
    static let legacyPrefix = "VAULT_"
    private static let notedLegacyNames = Mutex<Set<String>>([])

    /// The variable `name` (non-empty) and the name it was found under: `name`, else its old name with a note.
    private static func environmentValue(_ name: String, in environment: [String: String]) -> (String, String)? {
        if let value = environment[name], !value.isEmpty { return (name, value) }
        let legacy = legacyPrefix + name.dropFirst("CREDENTIAL_VAULT_".count)
        guard let value = environment[legacy], !value.isEmpty else { return nil }
        let first = notedLegacyNames.withLock { $0.insert(legacy).inserted }
        if first {
            Terminal.note("credential-vault: note: reading \(legacy) as \(name); rename it, the old name will go away")
        }
        return (legacy, value)
    }

    /// The config file, parsed; empty when there is none and none was named.
    private static func readConfigFile(_ path: String, required: Bool) throws -> ConfigFileContents {
        guard let data = try ConfigFile.contents(atPath: path, required: required) else { return ConfigFileContents() }
        return try ConfigFileContents(data: data, path: path)
    }

    /// The config file these options and this environment read (`--config`, `CREDENTIAL_VAULT_CONFIG`, else the
    /// default path), and whether it was named (then it must exist).
    private static func configFileSetting(
        options: ConnectionOptions,
        environment: [String: String]
    ) -> (setting: Setting, required: Bool) {
        if let path = options.config { return (Setting(value: path, source: .flag("config")), true) }
        if let (name, path) = environmentValue("CREDENTIAL_VAULT_CONFIG", in: environment) {
            return (Setting(value: path, source: .environment(name)), true)
        }
        return (Setting(value: Paths.configFile(environment: environment).path, source: .builtIn), false)
    }

    /// The profile named by `--profile` or `CREDENTIAL_VAULT_PROFILE` (the flag first); unset for the default
    /// profile (the config file's top level).
    /// - Throws: ``CLIError`` (usage) for `--profile` given twice (only `credential-vault agent` serves several) or a
    ///   name that cannot be a profile's.
    static func selectedProfile(options: ConnectionOptions, environment: [String: String]) throws -> Setting {
        guard options.profiles.count <= 1 else {
            throw CLIError.usage("--profile is given once here (only `credential-vault agent` serves several profiles)")
        }
        let setting: Setting =
            if let name = options.profiles.first {
                Setting(value: name, source: .flag("profile"))
            } else if !options.defaultProfileOnly,
                let (variable, name) = environmentValue(profileEnvironment, in: environment)
            {
                Setting(value: name, source: .environment(variable))
            } else {
                Setting(value: nil, source: .unset)
            }
        if let name = setting.value, !ConfigFileContents.isValidProfileName(name) {
            throw CLIError.usage(
                "the profile '\(Format.escapingControlCharacters(name))' (\(setting.source)) is not a profile's name: "
                    + "1 to 64 letters, digits, '.', '_' or '-'"
            )
        }
        return setting
    }

    /// The config-file keys that belong to one issuer (or FHIR server): a named profile that names its own issuer or
    /// FHIR server inherits none of them from the top level.
    static let issuerBoundFileKeys: Set<String> = Set(
        [
            issuerKey, fhirKey, keyServiceKey, clientIdKey, clientSecretFileKey, clientKeyFileKey, clientKeyIdKey,
            clientAssertionAudienceKey, clientAuthKey, redirectURIKey, postLogoutRedirectURIKey, userKey,
            keyServiceProtocolKey,
        ].map(\.fileKey)
    )

    /// The variable that names the profile.
    static let profileEnvironment = "CREDENTIAL_VAULT_PROFILE"

    /// The config file these options read, parsed (for the helpers, which choose a profile by host, and for
    /// `agent --all-profiles`).
    static func configFileContents(
        options: ConnectionOptions,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ConfigFileContents {
        let (file, required) = configFileSetting(options: options, environment: environment)
        return try readConfigFile(file.value ?? "", required: required)
    }
}
