import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// What one command run works with: the effective settings, the vault, and the embedded key service when
/// no issuer is configured. Built by ``with(_:_:)``, which also turns every failure into a message and an
/// exit status.
final class VaultContext {
    let settings: Settings
    let vault: Vault
    /// The SMART client, when a FHIR server is configured: its vault is ``credential-vault``.
    let smart: SMARTClient?
    private let embedded: EmbeddedKeyService?
    /// The user the command acts for, once known: named in error messages.
    var userId: String?

    private init(settings: Settings, vault: Vault, smart: SMARTClient?, embedded: EmbeddedKeyService?) {
        self.settings = settings
        self.vault = vault
        self.smart = smart
        self.embedded = embedded
    }

    var storeDirectory: URL { vault.userStorage.directory }
    var auth: Auth { vault.auth }
    var userStorage: UserStorage { vault.userStorage }
    /// Whether this run uses the embedded KeyServiceMock (started or not).
    var isEmbedded: Bool { settings.isEmbedded }

    /// Resolves the settings, starts the embedded key service when needed, runs `body`, stops the server.
    ///
    /// With `offline` the embedded key service is not started (for commands that need no network): the
    /// vault then points at the remembered embedded URL and is never asked to reach it.
    static func with(
        _ options: ConnectionOptions,
        offline: Bool = false,
        _ body: (VaultContext) async throws -> Void
    ) async throws {
        try await Command.guarded { () async throws -> VaultContext? in
            let settings = try Settings(options: options)
            let environment = ProcessInfo.processInfo.environment
            if let store = settings.profileDefaultStore { try Paths.prepareProfileStoreParents(store) }
            let embedded: EmbeddedKeyService?
            let issuer: URL
            let keyService: URL
            if settings.isEmbedded && offline {
                embedded = nil
                issuer = EmbeddedKeyService.rememberedIssuer(environment: environment)
                keyService = TIMLayout.keyServiceURL(issuer: issuer)
            } else if settings.isEmbedded {
                guard settings.clientId.value?.isEmpty != true else {
                    // keyservice-mock keeps registrations in memory, and the embedded one lives for one command.
                    throw CLIError.configuration(
                        "an empty client id (\(settings.clientId.source)) registers the client at the server, which the "
                            + "embedded default cannot keep between commands: give a client id, or an --issuer or "
                            + "--fhir server that registers clients"
                    )
                }
                let started = try await EmbeddedKeyService.start(
                    clientId: settings.clientId.value ?? Settings.defaultClientId,
                    redirectURI: settings.redirectURI.value ?? VaultConfiguration.defaultRedirectURI.absoluteString,
                    environment: environment
                )
                embedded = started
                issuer = started.server.issuer
                keyService = started.server.keyServiceURL
                let what =
                    settings.fhir.value == nil
                    ? "no issuer configured: using the embedded KeyServiceMock at \(issuer.absoluteString)"
                    : "no key service configured: using the embedded KeyServiceMock's at "
                        + started.server.keyServiceURL.absoluteString
                Terminal.note(
                    "credential-vault: \(what) (state in \(Paths.embeddedRoot(environment: environment).path))"
                )
            } else {
                embedded = nil
                // With a FHIR server the issuer is the FHIR server (SMART discovery names its endpoints).
                guard let issuerText = settings.fhir.value ?? settings.issuer.value else {
                    throw CLIError.configuration(
                        "a key service is configured (\(settings.keyService.source)) but no issuer: set --issuer or "
                            + "CREDENTIAL_VAULT_ISSUER too (or --fhir for a SMART on FHIR server)"
                    )
                }
                issuer =
                    settings.fhir.value == nil
                    ? try url(issuerText, name: "issuer", source: settings.issuer.source)
                    : try url(issuerText, name: "FHIR server", source: settings.fhir.source)
                keyService = try url(
                    settings.keyService.value ?? "",
                    name: "key service",
                    source: settings.keyService.source
                )
            }
            let context: VaultContext
            do {
                var configuration = try configuration(
                    settings,
                    issuer: issuer,
                    keyService: keyService,
                    offline: offline
                )
                if let fhirText = settings.fhir.value, offline {
                    // No request is sent: the login is bound to the FHIR server, and nothing is discovered.
                    configuration.issuer = try url(fhirText, name: "FHIR server", source: settings.fhir.source)
                    context = VaultContext(
                        settings: settings,
                        vault: try Vault(configuration: configuration),
                        smart: nil,
                        embedded: embedded
                    )
                } else if let fhirText = settings.fhir.value {
                    // A SMART launch: the FHIR server names the endpoints, and is what the login is bound to.
                    let smart = try SMARTClient(
                        fhirBase: try url(fhirText, name: "FHIR server", source: settings.fhir.source),
                        configuration: configuration
                    )
                    context = VaultContext(
                        settings: settings,
                        vault: try await smart.vault(),
                        smart: smart,
                        embedded: embedded
                    )
                } else {
                    context = VaultContext(
                        settings: settings,
                        vault: try Vault(configuration: configuration),
                        smart: nil,
                        embedded: embedded
                    )
                }
            } catch {
                await embedded?.stop()
                throw error
            }
            return context
        } body: { context in
            try await body(context)
        }
    }

    /// The address of the agent that would serve these options (their store directory and user), found without
    /// starting anything or printing anything; nil when the settings or the user cannot be told (the command then
    /// says why on its own path).
    static func agentAddress(_ options: ConnectionOptions) async -> AgentAddress? {
        do {
            let settings = try Settings(options: options)
            let environment = ProcessInfo.processInfo.environment
            var issuer = EmbeddedKeyService.rememberedIssuer(environment: environment)
            var keyService = TIMLayout.keyServiceURL(issuer: issuer)
            if !settings.isEmbedded {
                let issuerText = settings.fhir.value ?? settings.issuer.value ?? ""
                issuer = try url(issuerText, name: "issuer", source: settings.issuer.source)
                keyService = try url(
                    settings.keyService.value ?? "",
                    name: "key service",
                    source: settings.keyService.source
                )
            }
            let configuration = try configuration(settings, issuer: issuer, keyService: keyService, offline: true)
            let context = VaultContext(
                settings: settings,
                vault: try Vault(configuration: configuration),
                smart: nil,
                embedded: nil
            )
            return context.agentAddress(userId: try await context.resolveUser(), environment: environment)
        } catch {
            return nil
        }
    }

    /// The FHIR server the settings name and how to reach it (their CA file, timeout and logger), for `fhir get`
    /// with a token from the agent. Nothing is sent or started here.
    static func fhirConnection(_ settings: Settings) throws -> (fhirBase: URL, connection: FHIRConnection) {
        let fhirBase = try url(settings.fhir.value ?? "", name: "FHIR server", source: settings.fhir.source)
        let configuration = try configuration(settings, issuer: fhirBase, keyService: fhirBase, offline: true)
        let connection = FHIRConnection(
            transport: DefaultHTTPTransport.make(trustRoots: try trustRoots(settings)),
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
        return (fhirBase, connection)
    }

    /// The address of the agent serving `userId` from this context's store, for these settings' server and client.
    func agentAddress(userId: String, environment: [String: String]) -> AgentAddress {
        AgentAddress(store: storeDirectory, userId: userId, binding: agentBinding, environment: environment)
    }

    /// The server and client an agent's login belongs to, as the settings name them (the FHIR server or issuer, a
    /// trailing `/` aside, and the client id): a `token` or `fhir get` for another server finds no agent, and unlocks
    /// here, where the envelope's binding is checked.
    var agentBinding: String {
        var server = settings.fhir.value ?? settings.issuer.value ?? ""
        if server.hasSuffix("/") { server.removeLast() }
        return server + "\u{0}" + (settings.clientId.value ?? "")
    }

    /// `offline` (no request is sent): the client's secret or key file is not read, so a damaged one never
    /// blocks `logout --clear-user --local-only`.
    private static func configuration(
        _ settings: Settings,
        issuer: URL,
        keyService: URL,
        offline: Bool
    ) throws -> VaultConfiguration {
        let redirect = try url(
            settings.redirectURI.value ?? "",
            name: "redirect URI",
            source: settings.redirectURI.source
        )
        guard let timeout = settings.timeout.value.flatMap(TimeInterval.init), (1...600).contains(timeout) else {
            throw CLIError.configuration("the timeout (\(settings.timeout.source)) must be 1 to 600 seconds")
        }
        let scopes = (settings.scopes.value ?? "").split(separator: " ").map(String.init)
        var configuration = VaultConfiguration(
            issuer: issuer,
            clientId: settings.clientId.value ?? Settings.defaultClientId,
            clientAuthentication: offline ? .none : try clientAuthentication(settings),
            redirectURI: redirect,
            scopes: scopes.isEmpty ? VaultConfiguration.defaultScopes : scopes,
            keyServiceURL: keyService,
            storeDirectory: settings.store.value.map {
                URL(fileURLWithPath: Paths.expandingTilde($0), isDirectory: true)
            },
            requestTimeout: timeout
        )
        let version = settings.keyServiceProtocol.value.map { $0.lowercased() }
        guard let keyServiceProtocol = KeyServiceVersion.allCases.first(where: { "\($0)" == version }) else {
            throw CLIError.configuration(
                "the key-service protocol (\(settings.keyServiceProtocol.source)) must be v1 or v2"
            )
        }
        configuration.keyServiceProtocol = keyServiceProtocol
        try authorizationRequest(settings, into: &configuration)
        configuration.postLogoutRedirectURI = try settings.postLogoutRedirectURI.value.map {
            try url($0, name: "post-logout redirect URI", source: settings.postLogoutRedirectURI.source)
        }
        // Offline nothing is sent: a damaged CA file never blocks `logout --local-only`.
        configuration.trustRoots = offline ? nil : try trustRoots(settings)
        return configuration
    }

    /// The configured CA file, read now: one that cannot be read or parsed is a configuration error naming it.
    static func trustRoots(_ settings: Settings) throws -> TrustRoots? {
        guard let path = settings.caFile.value else { return nil }
        return try TrustRoots(
            pemFile: Paths.expandingTilde(path),
            onlyThese: settings.caFileReplacesSystemRoots
        )
    }

    /// A public client unless a secret file or a private key file is configured (not both).
    private static func clientAuthentication(_ settings: Settings) throws -> ClientAuthentication {
        let method: ClientAuthentication.Method?
        switch settings.clientAuth.value {
        case nil: method = nil
        case ClientAuthentication.Method.clientSecretBasic.name: method = .clientSecretBasic
        case ClientAuthentication.Method.clientSecretPost.name: method = .clientSecretPost
        case let other?:
            throw CLIError.configuration(
                "client-auth (\(settings.clientAuth.source)) is '\(other)'; it is client_secret_basic or "
                    + "client_secret_post (a private key file means private_key_jwt)"
            )
        }
        if settings.clientKeyFile.value == nil {
            let keySettings = [
                ("client-key-id", settings.clientKeyId),
                ("client-assertion-audience", settings.clientAssertionAudience),
            ]
            if let (name, setting) = keySettings.first(where: { $0.1.value != nil }) {
                throw CLIError.configuration(
                    "\(name) (\(setting.source)) applies to a private key client, but no client-key-file is configured"
                )
            }
        }
        switch (settings.clientSecretFile.value, settings.clientKeyFile.value) {
        case (nil, nil):
            guard method == nil else {
                throw CLIError.configuration("client-auth is set but no client-secret-file is configured")
            }
            return .none
        case (let path?, nil):
            return try .clientSecret(
                ConfigFile.secret(atPath: Paths.expandingTilde(path), what: "the client secret"),
                method: method
            )
        case (nil, let path?):
            guard method == nil else {
                throw CLIError.configuration("client-auth applies to a client secret, not to a private key file")
            }
            return try .privateKeyJWT(
                pem: ConfigFile.secret(atPath: Paths.expandingTilde(path), what: "the client key"),
                keyId: settings.clientKeyId.value,
                audience: try assertionAudience(settings)
            )
        case (_?, _?):
            throw CLIError.configuration("configure a client secret file or a client key file, not both")
        }
    }

    /// `max_age`, `acr_values`, `login_hint` and the extra parameters of the login's authorization request.
    private static func authorizationRequest(
        _ settings: Settings,
        into configuration: inout VaultConfiguration
    ) throws {
        if let text = settings.maxAge.value {
            guard let seconds = Int(text), seconds >= 0 else {
                throw CLIError.configuration(
                    "max-age (\(settings.maxAge.source)) is '\(text)'; it is a whole number of seconds, 0 or more"
                )
            }
            configuration.maxAge = seconds
        }
        configuration.acrValues = (settings.acrValues.value ?? "").split(separator: " ").map(String.init)
        configuration.loginHint = settings.loginHint.value
        guard let text = settings.authParams.value else { return }
        // Flags and the config file's list come one a line; the environment's may be separated by spaces.
        var separators: Set<Character> = ["\n"]
        if case .environment = settings.authParams.source { separators.insert(" ") }
        for pair in text.split(whereSeparator: separators.contains) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw CLIError.configuration(
                    "auth-param (\(settings.authParams.source)) '\(pair)' is not key=value"
                )
            }
            configuration.authorizationParameters[String(parts[0])] = String(parts[1])
        }
    }

    /// The configured `aud` of the client key's assertions: `tokenEndpoint` (the default) or `issuer`.
    private static func assertionAudience(_ settings: Settings) throws -> ClientAssertionAudience {
        guard let text = settings.clientAssertionAudience.value else { return .tokenEndpoint }
        guard let audience = ClientAssertionAudience(rawValue: text) else {
            throw CLIError.configuration(
                "client-assertion-audience (\(settings.clientAssertionAudience.source)) is '\(text)'; it is "
                    + "tokenEndpoint or issuer"
            )
        }
        return audience
    }

    private static func url(_ text: String, name: String, source: SettingSource) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else {
            throw CLIError.configuration("the \(name) '\(text)' (\(source)) is not an http or https URL")
        }
        return url
    }

    func stop() async {
        await embedded?.stop()
    }

    // MARK: Users

    /// The configured user, else the only stored one.
    func resolveUser() async throws -> String {
        if let user = settings.user.value {
            userId = user
            return user
        }
        let users = try await userStorage.availableUserIds
        if users.count == 1 {
            userId = users[0]
            return users[0]
        }
        if users.isEmpty {
            throw CLIError(
                status: .notRegistered,
                description:
                    "no login is stored in \(storeDirectory.path). Run `credential-vault register` to log in with "
                    + "OpenID Connect and set a password."
            )
        }
        throw CLIError.usage(
            "\(users.count) users are stored (\(users.joined(separator: ", "))); say which one with --user or CREDENTIAL_VAULT_USER"
        )
    }

    /// Like ``resolveUser()``, and refuses a user with nothing stored (exit status 67).
    func resolveRegisteredUser() async throws -> String {
        let user = try await resolveUser()
        guard await userStorage.hasStoredRefreshToken(userId: user) else {
            throw VaultError(.notRegistered, reason: "No login is stored for \(user).")
        }
        return user
    }

    /// Logs in the registered user (``resolveRegisteredUser()``) as `unlocking` says: device unlock when it is on
    /// and not refused with `--no-device-unlock`, otherwise the password.
    func unlockRegisteredUser(_ unlocking: UnlockOptions) async throws -> (token: AccessToken, viaDevice: Bool) {
        let userId = try await resolveRegisteredUser()
        return try await unlock(userId: userId, prompt: unlocking.prompt, allowDeviceUnlock: !unlocking.noDeviceUnlock)
    }

    /// Logs in with device unlock when it is on (and `allowDeviceUnlock`), otherwise with the password.
    /// - Returns: the access token and whether device unlock was used.
    func unlock(
        userId: String,
        prompt: PasswordPrompt,
        allowDeviceUnlock: Bool = true,
        storeNewRefreshToken: Bool = true
    ) async throws -> (token: AccessToken, viaDevice: Bool) {
        if allowDeviceUnlock, await userStorage.hasDeviceUnlock(userId: userId) {
            do {
                let token = try await Progress.run("Unlocking with the device secret...") {
                    try await auth.loginWithDeviceUnlock(userId: userId, storeNewRefreshToken: storeNewRefreshToken)
                }
                return (token, true)
            } catch let error as VaultError where error.isDeviceUnlockFailed {
                guard prompt.canAsk else { throw error }
                Terminal.note("credential-vault: \(CLIError.from(error).description) Asking for the password instead.")
            }
        }
        let password = try prompt.read("Password for \(userId): ")
        let token = try await Progress.run("Unlocking (Argon2id, key service, token endpoint)...") {
            try await auth.loginWithPassword(
                userId: userId,
                password: password,
                storeNewRefreshToken: storeNewRefreshToken
            )
        }
        return (token, false)
    }
}
