public import CredentialVault
public import Foundation

/// A SMART on FHIR app's client (SMART App Launch 2.2) on top of the vault: discovery, standalone and EHR
/// launch, the launch context, and FHIR requests.
///
/// It adds only what SMART adds. The login itself, its password, device unlock, the registered client, introspection
/// and logout are the vault's: reach them through ``vault()`` (`try await client.vault().auth`), the one door to
/// ``Auth`` and ``UserStorage``.
///
/// The launch context (patient, encounter, `fhirContext`, the granted scope, `fhirUser`, ...) is sealed in the
/// same envelope as the refresh token, so after ``Auth/loginWithPassword(userId:password:storeNewRefreshToken:)`` in a
/// new process ``launchContext`` is what ``authorize(userId:timeout:presentAuthorizationURL:)`` returned at the
/// launch. FHIR requests (``FHIRAccess``) always carry a fresh access token.
///
/// The names follow Swift-SMART where they fit: ``ready()``, ``handleEHRLaunch(iss:launch:)``,
/// ``authorize(userId:timeout:presentAuthorizationURL:)``, ``getJSON(at:)``; the app's redirect goes to
/// ``Auth/handleRedirect(url:)``.
public actor SMARTClient: FHIRAccess {
    /// The FHIR server the app trusts: discovery starts here, every authorization request names it as `aud`, and
    /// it is the issuer the stored login is bound to.
    public nonisolated let fhirBase: URL
    /// The vault's configuration, with ``VaultConfiguration/issuer`` set to ``fhirBase``.
    public nonisolated let configuration: VaultConfiguration
    /// Whether a server whose smart-configuration does not offer PKCE with S256 may be used (an old server). Off
    /// by default: such a server is refused. PKCE S256 is sent either way.
    public nonisolated let allowsServerWithoutS256: Bool
    let transport: any HTTPTransport
    /// How FHIR requests are sent: the configuration's timeout and logger.
    public nonisolated var fhirConnection: FHIRConnection {
        FHIRConnection(transport: transport, timeout: configuration.requestTimeout, logger: configuration.logger)
    }
    private var discovered: (configuration: SMARTConfiguration, vault: Vault)?
    private var pendingLaunch: String?

    /// A client of the FHIR server at `fhirBase`.
    /// - Parameters:
    ///   - fhirBase: the FHIR server's base URL: https, or http to a loopback address.
    ///   - configuration: the client id, redirect URI, scopes (such as `launch/patient openid fhirUser
    ///     offline_access patient/*.rs`), key service and store; its `issuer` is replaced by `fhirBase` and its
    ///     endpoints come from SMART discovery. Without a client id the app registers itself at the server's
    ///     `registration_endpoint` at its launch (RFC 7591; `private_key_jwt` with a new key where the server offers
    ///     it), and the registration is sealed with the refresh token, so later logins reuse it.
    ///   - allowsServerWithoutS256: true lets a server whose smart-configuration does not offer PKCE S256 be used
    ///     (``allowsServerWithoutS256``).
    ///   - transport: how requests are sent; nil for ``DefaultHTTPTransport`` with the configuration's trust roots.
    /// - Throws: ``VaultError`` `.insecureURL` when `fhirBase` is neither https nor a loopback address (access
    ///   tokens are sent there).
    public init(
        fhirBase: URL,
        configuration: VaultConfiguration,
        allowsServerWithoutS256: Bool = false,
        transport: (any HTTPTransport)? = nil
    ) throws(VaultError) {
        try FHIRConnection.check(fhirBase: fhirBase)
        var configuration = configuration
        configuration.issuer = fhirBase
        configuration.providerMetadata = nil
        self.fhirBase = fhirBase
        self.configuration = configuration
        self.allowsServerWithoutS256 = allowsServerWithoutS256
        self.transport = transport ?? DefaultHTTPTransport.make(trustRoots: configuration.trustRoots)
    }

    // MARK: Discovery

    /// The server's SMART configuration, discovered once (`.well-known/smart-configuration`, else the
    /// CapabilityStatement) and kept.
    /// - Throws: ``VaultError``: `.discoveryFailed` when neither document names the endpoints, or when the
    ///   smart-configuration does not offer S256 and ``allowsServerWithoutS256`` is off; `isNetworkError`.
    @discardableResult
    public func ready() async throws(VaultError) -> SMARTConfiguration {
        try await vaultAndConfiguration().configuration
    }

    /// The vault (``Auth`` and ``UserStorage``) over the discovered endpoints.
    public func vault() async throws(VaultError) -> Vault {
        try await vaultAndConfiguration().vault
    }

    private func vaultAndConfiguration() async throws(VaultError) -> (configuration: SMARTConfiguration, vault: Vault) {
        if let discovered { return discovered }
        let smart = try await SMARTDiscovery(
            transport: transport,
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
        .configuration(for: fhirBase)
        // Another call may have finished discovery while this one waited: there is one vault per client.
        if let discovered { return discovered }
        // A CapabilityStatement cannot say; a smart-configuration that lists methods without S256 says no.
        if smart.source == .wellKnown, !smart.offersS256, !allowsServerWithoutS256 {
            let offered =
                smart.codeChallengeMethods.isEmpty ? "none" : smart.codeChallengeMethods.joined(separator: ", ")
            throw VaultError(
                .discoveryFailed,
                reason: "The FHIR server \(fhirBase.displayHost) does not offer PKCE with S256 (its "
                    + "code_challenge_methods_supported: \(VaultError.printable(offered, limit: 100))), which every "
                    + "SMART app must use. Refusing it; allow it explicitly only for a legacy server you trust.",
                host: fhirBase.displayHost
            )
        }
        var configuration = configuration
        configuration.providerMetadata = try ProviderMetadata(
            issuer: fhirBase,
            issuerIdentifier: smart.issuer,
            authorizationEndpoint: smart.authorizationEndpoint,
            tokenEndpoint: smart.tokenEndpoint,
            revocationEndpoint: smart.revocationEndpoint,
            introspectionEndpoint: smart.introspectionEndpoint,
            registrationEndpoint: smart.registrationEndpoint,
            jwksURI: smart.jwksURI,
            tokenEndpointAuthMethods: smart.tokenEndpointAuthMethods,
            tokenEndpointAuthSigningAlgorithms: smart.tokenEndpointAuthSigningAlgorithms
        )
        configuration.providerMetadata?.dpopSigningAlgorithms = smart.dpopSigningAlgorithms
        let result = (smart, try Vault(configuration: configuration, transport: transport))
        discovered = result
        return result
    }

    // MARK: Launch

    /// Takes an EHR launch: the EHR opened the app's launch URL with `iss` (its FHIR base) and `launch` (an opaque
    /// id). The next ``authorize(userId:timeout:presentAuthorizationURL:)`` carries `launch`.
    /// - Throws: ``VaultError`` `.openIDConnectFailed` when `iss` is not this client's FHIR base: an app launches
    ///   only from a server it trusts.
    public func handleEHRLaunch(iss: URL, launch: String) throws(VaultError) {
        guard Self.sameBase(iss, fhirBase) else {
            throw .openIDConnectFailed(
                "refusing the EHR launch: its iss \(VaultError.printable(iss.absoluteString, limit: 200)) is not the "
                    + "FHIR server this app trusts (\(fhirBase.absoluteString))",
                host: iss.displayHost
            )
        }
        guard !launch.isEmpty else {
            throw .openIDConnectFailed("refusing the EHR launch: its launch parameter is empty")
        }
        pendingLaunch = launch
    }

    /// The launch: the authorization code flow with PKCE S256, `aud` = ``fhirBase``, and `launch` after
    /// ``handleEHRLaunch(iss:launch:)`` (standalone otherwise). The tokens and the launch context are kept in memory:
    /// the vault's ``Auth/storeRefreshToken(withNewPassword:)`` seals them under a password. An app's own-scheme
    /// redirect goes to ``Auth/handleRedirect(url:)`` (`try await client.vault().auth.handleRedirect(url:)`).
    ///
    /// With `openid fhirUser` in the scopes the id token is validated and its `fhirUser` kept in the context.
    /// - Parameters:
    ///   - userId: the name to keep the login under when no id token names the user (no `openid` scope).
    ///   - timeout: how long to wait for the redirect.
    ///   - presentAuthorizationURL: gets the URL to show (a CLI prints it or opens a browser).
    /// - Returns: the launch context.
    /// - Throws: ``VaultError``, as
    ///   ``Auth/performOpenIDConnectFlow(flow:userId:timeout:scopes:authorizationParameters:presentAuthorizationURL:)``.
    public func authorize(
        userId: String? = nil,
        timeout: Duration = .seconds(300),
        presentAuthorizationURL: @escaping @Sendable (URL) async -> Void
    ) async throws(VaultError) -> LaunchContext {
        let (smart, vault) = try await vaultAndConfiguration()
        var parameters = ["aud": fhirBase.absoluteString]
        let launch = pendingLaunch
        var scopes = configuration.scopes
        if let launch {
            parameters["launch"] = launch
            // An EHR launch asks for the launch scope (SMART App Launch 2.2, "Scopes for requesting context data").
            if !scopes.contains("launch") { scopes.insert("launch", at: 0) }
        }
        if smart.source == .capabilityStatement, smart.issuer == nil, scopes.contains("openid") {
            throw .invalidConfiguration(
                "the FHIR server \(fhirBase.displayHost) states no issuer (it was found through its "
                    + "CapabilityStatement), so an id token from it cannot be checked: ask without the openid scope, "
                    + "and name the user"
            )
        }
        _ = try await vault.auth.performOpenIDConnectFlow(
            userId: userId,
            timeout: timeout,
            scopes: scopes,
            authorizationParameters: parameters,
            presentAuthorizationURL: presentAuthorizationURL
        )
        // The launch id is spent only by a launch that went through: a failed one can be tried again.
        pendingLaunch = nil
        let fhirUser: String? = await vault.auth.idToken?["fhirUser"]
        let record = LaunchRecord(
            fhirBase: fhirBase.absoluteString,
            issuer: smart.issuer,
            tokenEndpoint: smart.tokenEndpoint.absoluteString,
            clientId: await vault.auth.clientRegistration?.clientId ?? configuration.clientId,
            fhirUser: fhirUser,
            isEHRLaunch: launch != nil
        )
        try await vault.auth.addToSessionContext([LaunchRecord.key: record.json])
        return LaunchContext(sessionContext: await vault.auth.sessionContext)
    }

    // MARK: Launch context and FHIR access

    /// The open session's launch context: what ``authorize(userId:timeout:presentAuthorizationURL:)`` returned, or,
    /// after a later login through the vault's ``Auth`` (password or device unlock), what the envelope was sealed
    /// with; nil without a session.
    public var launchContext: LaunchContext? {
        get async {
            guard let auth = discovered?.vault.auth, await auth.isLoggedIn else { return nil }
            return LaunchContext(sessionContext: await auth.sessionContext)
        }
    }

    /// The session's access token for ``FHIRAccess``: the vault's ``Auth/getAccessToken(forceRefresh:)``, fresh for
    /// the leeway; with `forceRefresh` a new one. Discovery runs first when it has not yet.
    public func getAccessToken(forceRefresh: Bool = false) async throws(VaultError) -> AccessToken {
        try await vault().auth.getAccessToken(forceRefresh: forceRefresh)
    }

    /// The login's DPoP proof for one `method` request to `url` with `accessToken`, when the token is bound to a key
    /// (RFC 9449); nil for a bearer token.
    public func dpopProof(method: String, url: URL, accessToken: AccessToken) async throws(VaultError) -> String? {
        guard accessToken.isDPoPBound else { return nil }
        return try await vault().auth.dpopProof(method: method, url: url, accessToken: accessToken.token)
    }

    /// Keeps the FHIR server's `DPoP-Nonce` for the next proof; true when `response` asked for it (`use_dpop_nonce`).
    public func rememberDPoPNonce(from response: HTTPResponse, for url: URL) async -> Bool {
        guard let auth = discovered?.vault.auth else { return false }
        return auth.rememberDPoPNonce(from: response, for: url)
    }

    /// Whether two FHIR base URLs are the same server, a trailing slash aside.
    static func sameBase(_ lhs: URL, _ rhs: URL) -> Bool {
        func trimmed(_ url: URL) -> String {
            let text = url.absoluteString
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        return trimmed(lhs) == trimmed(rhs)
    }
}
