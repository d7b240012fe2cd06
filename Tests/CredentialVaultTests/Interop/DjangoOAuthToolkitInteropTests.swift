import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The same flows as AuthTests, against django-oauth-toolkit: a real third-party OpenID Connect issuer
/// with rotation and reuse protection on, opaque refresh tokens, revocation only in its RFC 8414
/// document, served over https by nginx in front of it (the vault trusts the test authority through
/// its configuration's trust roots). Keys come from KeyServiceMock, over https too.
///
/// Serialized: each test starts its own django-oauth-toolkit (Python, SQLite migrations); several at once on
/// two cores only slow each other down.
@Suite("Auth against django-oauth-toolkit (interop)", .serialized, .needsDjangoOAuthToolkit)
struct DjangoOAuthToolkitInteropTests {
    /// What the browser does with DOT's redirect: it resolves `localhost` itself and asks the loopback listener (the
    /// transport sends plain http only to loopback IP literals).
    static func deliver(_ redirect: URL) async {
        var target = URLComponents(url: redirect, resolvingAgainstBaseURL: false)
        if target?.host == "localhost" { target?.host = "127.0.0.1" }
        guard let url = target?.url else { return }
        _ = try? await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60))
    }

    struct Setup {
        let dot: DjangoOAuthToolkit
        let keys: KeyServiceMockServer
        let root: URL
        let transport: CountingTransport

        /// Runs `body` with a DOT server, a KeyServiceMock and a store directory, all gone before returning.
        static func with(
            isolation: isolated (any Actor)? = #isolation,
            jwtAccessTokens: Bool = false,
            redirectURIs: [String] = [],
            _ body: (Setup) async throws -> Void
        ) async throws {
            let dot = try await DjangoOAuthToolkit.start(jwtAccessTokens: jwtAccessTokens, redirectURIs: redirectURIs)
            defer { dot.stop() }
            var mock = KeyServiceMockConfiguration()
            mock.tls = try TestTLS.server()
            try await KeyServiceMockServer.withServer(mock) { keys in
                try await TemporaryDirectory.with { root in
                    let transport = CountingTransport(trustRoots: try TestTLS.trustRoots())
                    try await body(Setup(dot: dot, keys: keys, root: root, transport: transport))
                }
            }
        }

        func vault(
            clientId: String,
            authentication: ClientAuthentication = .none,
            redirectURI: URL = VaultConfiguration.defaultRedirectURI
        ) throws -> Vault {
            var configuration = VaultConfiguration(
                issuer: dot.issuer,
                clientId: clientId,
                clientAuthentication: authentication,
                redirectURI: redirectURI,
                keyServiceURL: keys.keyServiceURL,
                storeDirectory: root.appending(path: "store"),
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            // The test authority, as an app with a private CA gives it; the counting transport trusts the same.
            configuration.trustRoots = try TestTLS.trustRoots()
            return try Vault(configuration: configuration, transport: transport)
        }

        func redeemDirectly(_ refreshToken: String, clientId: String) async throws -> (status: Int, body: String) {
            let response = try await Browser.postForm(
                dot.issuer.appending(path: "token/"),
                ["grant_type": "refresh_token", "client_id": clientId, "refresh_token": refreshToken]
            )
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }

        /// A first refresh token from DOT's password grant, sealed under `password` in a vault of that client.
        func registeredByPasswordGrant(password: String) async throws -> (Vault, firstRefreshToken: String) {
            let first = try await dot.passwordGrant()
            let vault = try vault(clientId: dot.passwordClientId)
            try await vault.userStorage.storeRefreshToken(
                // The access token is opaque (DOT's default): the vault names the user itself.
                RefreshToken(token: first.refreshToken, userId: dot.username),
                withNewPassword: password
            )
            return (vault, first.refreshToken)
        }
    }

    static let password = "interop password"

    @Test(
        "first refresh token by the code flow through DOT's login form, then password login and a forced refresh",
        arguments: [false, true]
    )
    func codeFlow(jwtAccessTokens: Bool) async throws {
        try await Setup.with(jwtAccessTokens: jwtAccessTokens) { setup in
            let vault = try setup.vault(clientId: setup.dot.codeClientId)
            let dot = setup.dot
            let userId = try await vault.auth.performOpenIDConnectFlow { url in
                guard let redirect = try? await dot.driveLogin(authorizationURL: url) else { return }
                await Self.deliver(redirect)
            }
            #expect(!userId.isEmpty)
            try await vault.auth.storeRefreshToken(withNewPassword: Self.password)

            let restarted = try setup.vault(clientId: setup.dot.codeClientId)
            let token = try await restarted.auth.loginWithPassword(password: Self.password)
            #expect(token.userId == userId)
            // The user is the validated id_token's sub; the access token is handed out as DOT made it.
            #expect((token.jwt != nil) == jwtAccessTokens)
            #expect(token.expireDate != nil)
            let forced = try await restarted.auth.getAccessToken(forceRefresh: true)
            #expect(forced.token != token.token)
            #expect(forced.userId == userId)
        }
    }

    @Test(
        "a confidential client logs in by the code flow, refreshes and revokes at logout with its secret",
        // nil: the method DOT's discovery document lists (client_secret_basic comes first).
        arguments: [nil, ClientAuthentication.Method.clientSecretBasic, .clientSecretPost]
    )
    func confidentialClient(method: ClientAuthentication.Method?) async throws {
        try await Setup.with { setup in
            let dot = setup.dot
            let authentication = try ClientAuthentication.clientSecret(dot.confidentialClientSecret, method: method)
            let vault = try setup.vault(clientId: dot.confidentialClientId, authentication: authentication)
            let userId = try await vault.auth.performOpenIDConnectFlow { url in
                guard let redirect = try? await dot.driveLogin(authorizationURL: url) else { return }
                await Self.deliver(redirect)
            }
            try await vault.auth.storeRefreshToken(withNewPassword: Self.password)

            let restarted = try setup.vault(clientId: dot.confidentialClientId, authentication: authentication)
            let token = try await restarted.auth.loginWithPassword(password: Self.password)
            #expect(token.userId == userId)
            let live = try #require(await restarted.auth.refreshToken)
            try await restarted.auth.logout(clearUser: false)
            let afterLogout = try await postForm(
                dot.issuer.appending(path: "token/"),
                [
                    "grant_type": "refresh_token", "refresh_token": live.token, "client_id": dot.confidentialClientId,
                    "client_secret": dot.confidentialClientSecret,
                ]
            )
            #expect(afterLogout.status == 400)
            #expect(String(decoding: afterLogout.body, as: UTF8.self).contains("invalid_grant"))
        }
    }

    @Test(
        "a redirect URI registered exactly (localhost, fixed port) is used exactly; an unregistered one ends naming it"
    )
    func exactRedirectURI() async throws {
        let port = try FreePort.pick()
        let registered = "http://localhost:\(port)/callback"
        try await Setup.with(redirectURIs: [registered]) { setup in
            let dot = setup.dot
            let vault = try setup.vault(
                clientId: dot.confidentialClientId,
                authentication: try .clientSecret(dot.confidentialClientSecret),
                redirectURI: try #require(URL(string: registered))
            )
            let sent = URLBox()
            let userId = try await vault.auth.performOpenIDConnectFlow { url in
                sent.set(url)
                guard let redirect = try? await dot.driveLogin(authorizationURL: url) else { return }
                await Self.deliver(redirect)
            }
            #expect(!userId.isEmpty)
            let items = URLComponents(url: try #require(sent.get()), resolvingAgainstBaseURL: false)?.queryItems
            #expect(items?.first { $0.name == "redirect_uri" }?.value == registered)

            // localhost without a port is not registered: DOT shows its error page, and the wait ends saying to
            // register a URI with a fixed port (the port chosen here changes at every login).
            let unregistered = try setup.vault(
                clientId: dot.confidentialClientId,
                authentication: try .clientSecret(dot.confidentialClientSecret),
                redirectURI: try #require(URL(string: "http://localhost/callback"))
            )
            let error = await #expect(throws: VaultError.self) {
                try await unregistered.auth.performOpenIDConnectFlow(timeout: .seconds(5)) { url in
                    _ = try? await dot.driveLogin(authorizationURL: url)
                }
            }
            #expect(error?.kind == .openIDConnectFailed)
            #expect(
                error?.description.contains("with a fixed port (such as http://localhost:") == true,
                "\(String(describing: error))"
            )
            #expect(error?.description.contains(dot.confidentialClientId) == true)
        }
    }

    @Test("the confidential client without its secret is refused at the token endpoint (invalid_client), nothing kept")
    func confidentialClientWithoutSecret() async throws {
        try await Setup.with { setup in
            let dot = setup.dot
            let vault = try setup.vault(clientId: dot.confidentialClientId)
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.performOpenIDConnectFlow { url in
                    guard let redirect = try? await dot.driveLogin(authorizationURL: url) else { return }
                    await Self.deliver(redirect)
                }
            }
            #expect(error?.kind == .serverRefused)
            #expect(error?.description.contains("invalid_client") == true, "\(String(describing: error))")
            #expect(await !vault.auth.isLoggedIn)
        }
    }

    @Test("password grant for the first token; rotation persisted under reuse protection; logout revokes")
    func rotationAndRevocation() async throws {
        try await Setup.with { setup in
            let clientId = setup.dot.passwordClientId
            let (vault, first) = try await setup.registeredByPasswordGrant(password: Self.password)

            _ = try await vault.auth.loginWithPassword(password: Self.password)
            let afterLogin = try #require(await vault.auth.refreshToken)
            #expect(afterLogin.token != first)
            _ = try await vault.auth.getAccessToken(forceRefresh: true)
            let afterRefresh = try #require(await vault.auth.refreshToken)
            #expect(afterRefresh != afterLogin)

            // A restart: the persisted token is the latest, or DOT's reuse protection would refuse it.
            let restarted = try setup.vault(clientId: clientId)
            _ = try await restarted.auth.loginWithPassword(password: Self.password)
            let live = try #require(await restarted.auth.refreshToken)

            // Logout revokes at the endpoint found only in DOT's RFC 8414 metadata.
            #expect(try await restarted.auth.metadata().revocationEndpoint != nil)
            try await restarted.auth.logout(clearUser: false)
            #expect(setup.transport.count(endingWith: "/revoke_token") == 1)
            let afterLogout = try await setup.redeemDirectly(live.token, clientId: clientId)
            #expect(afterLogout.status == 400 && afterLogout.body.contains("invalid_grant"))

            // Logout erased the stored token here as well (issue 21): the next password login finds no login to
            // open and says so before any password work or request.
            let requestsBefore = setup.transport.count(endingWith: "/token")
            let error = await #expect(throws: VaultError.self) {
                try await restarted.auth.loginWithPassword(password: Self.password)
            }
            #expect(error?.kind == .notRegistered)
            #expect(error?.isNotRegistered == true)
            #expect(setup.transport.count(endingWith: "/token") == requestsBefore)
            #expect(await !restarted.auth.isLoggedIn)
        }
    }

    @Test("logout revokes the token the store holds now, though another process rotated it after the session began")
    func logoutRevokesStoredToken() async throws {
        try await Setup.with { setup in
            let clientId = setup.dot.passwordClientId
            let (first, _) = try await setup.registeredByPasswordGrant(password: Self.password)
            _ = try await first.auth.loginWithPassword(password: Self.password)
            // Another process logs in: it rotates the token, and the store holds the new one.
            let other = try setup.vault(clientId: clientId)
            _ = try await other.auth.loginWithPassword(password: Self.password)
            let live = try #require(await other.auth.refreshToken)
            #expect(live != (await first.auth.refreshToken))

            try await first.auth.logout(clearUser: false)
            // The stored (newest) token is dead at DOT; revoking the first session's stale one would have left it.
            let afterLogout = try await setup.redeemDirectly(live.token, clientId: clientId)
            #expect(afterLogout.status == 400 && afterLogout.body.contains("invalid_grant"))
        }
    }

    @Test("a reused refresh token kills the family at DOT, and the vault reports loginExpired")
    func reuseDetection() async throws {
        try await Setup.with { setup in
            let clientId = setup.dot.passwordClientId
            let (vault, first) = try await setup.registeredByPasswordGrant(password: Self.password)
            _ = try await vault.auth.loginWithPassword(password: Self.password)
            // Someone replays the first (already rotated) token: DOT revokes the whole family.
            let replay = try await setup.redeemDirectly(first, clientId: clientId)
            #expect(replay.status == 400 && replay.body.contains("invalid_grant"))
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.getAccessToken(forceRefresh: true)
            }
            #expect(error?.kind == .loginExpired)
            #expect(error?.isLoginExpired == true)
            #expect(await !vault.auth.isLoggedIn)
        }
    }
}
