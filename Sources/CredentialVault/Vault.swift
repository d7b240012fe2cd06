/// One configured vault: the THP-style entry point holding ``auth`` and ``userStorage``.
public struct Vault: Sendable {
    /// The configuration both parts were made with.
    public let configuration: VaultConfiguration
    /// Encrypted refresh tokens per user.
    public let userStorage: UserStorage
    /// Login, fresh access tokens, logout.
    public let auth: Auth

    /// Builds both parts over HTTP: over `transport`, else ``DefaultHTTPTransport`` with the configuration's
    /// ``VaultConfiguration/trustRoots`` (AsyncHTTPClient on Linux, URLSession on Apple platforms).
    /// - Throws: ``VaultError`` `.insecureURL` when the issuer or key service URL is neither https nor a
    ///   loopback address.
    public init(
        configuration: VaultConfiguration,
        transport: (any HTTPTransport)? = nil
    ) throws(VaultError) {
        let transport = transport ?? DefaultHTTPTransport.make(trustRoots: configuration.trustRoots)
        try Auth.checkIssuer(configuration.issuer)
        let keyService = try HTTPKeyService(
            baseURL: configuration.keyServiceURL,
            transport: transport,
            timeout: configuration.requestTimeout,
            logger: configuration.logger
        )
        self.configuration = configuration
        userStorage = UserStorage(
            keyService: keyService,
            directory: configuration.storeDirectory,
            binding: EnvelopeBinding(
                issuer: configuration.issuer,
                clientId: configuration.clientId,
                keyServiceURL: configuration.keyServiceURL
            ),
            keyServiceVersion: configuration.keyServiceProtocol,
            minimumPasswordLength: configuration.minimumPasswordLength,
            opsLimit: configuration.opsLimit,
            memLimitBytes: configuration.memLimitBytes,
            now: configuration.now,
            logger: configuration.logger
        )
        auth = Auth(configuration: configuration, userStorage: userStorage, transport: transport)
    }
}
