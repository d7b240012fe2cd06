import Foundation
import KeyServiceMock
import Testing

@testable import CredentialVault

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): `logout` returns the URL that ends the issuer's
/// browser session, with `id_token_hint` (the login's latest id token, sealed with it), `client_id`, and
/// `post_logout_redirect_uri` when configured. Over real HTTP against keyservice-mock, which honours the URL.
@Suite("RP-initiated logout: logout returns the URL that ends the browser session")
struct EndSessionTests {
    /// The query of `url` by name.
    static func fields(_ url: URL) -> [String: String] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    @Test("after the code flow: id_token_hint, client_id and post_logout_redirect_uri; the issuer takes the URL")
    func afterCodeFlow() async throws {
        try await AuthFixture.with { fixture in
            var configuration = fixture.configuration
            configuration.postLogoutRedirectURI = URL(string: "http://127.0.0.1:8765/callback")!
            let vault = try Vault(configuration: configuration, transport: fixture.transport)
            _ = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            let idToken = try #require(await vault.auth.idToken)
            let url = try #require(try await vault.auth.logout())
            #expect(url.path().hasSuffix("/protocol/openid-connect/logout"), "\(url.path())")
            #expect(url.host() == fixture.server.issuer.host())
            let fields = Self.fields(url)
            #expect(fields["id_token_hint"] == idToken.token)
            #expect(fields["client_id"] == "vault")
            #expect(fields["post_logout_redirect_uri"] == "http://127.0.0.1:8765/callback")
            // The issuer takes it: it sends the browser to the registered redirect.
            let answer = try await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60))
            #expect((300..<400).contains(answer.status), "\(answer.status)")
            #expect(answer.headers["location"]?.hasPrefix("http://127.0.0.1:8765/callback") == true)
        }
    }

    @Test("a login opened with the password in a new process: the sealed id token is the hint")
    func afterPasswordLogin() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let later = try fixture.restarted()
            _ = try await later.auth.loginWithPassword(password: AuthFixture.password)
            let latest = try #require(fixture.server.authentication.lastIDToken)
            let url = try #require(try await later.auth.logout())
            let fields = Self.fields(url)
            #expect(fields["client_id"] == "vault")
            #expect(fields["id_token_hint"] == latest, "the login's latest id token, sealed with it")
            #expect(fields["post_logout_redirect_uri"] == nil, "\(fields.keys.sorted())")
            // Asked again after the logout: no session, so no hint.
            #expect(Self.fields(try #require(try await later.auth.endSessionURL()))["id_token_hint"] == nil)
        }
    }

    @Test("an id token that does not read as a JWT (a stricter parser later): no idToken, no hint; a JWT one is sent")
    func idTokenReadWhereUsed() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let auth = fixture.vault.auth
            let sent = try #require(await auth.idToken)
            let context = try #require(await auth.loginContext)
            // The envelope keeps the id token as sealed (SealedLoginContextTests): it is read as a JWT where it is
            // used. A refresh answer brings a new one at once, so the session holds the old one here directly.
            await auth.holdSession(userId: userId, loginContext: context, idToken: "not-a-jwt")
            #expect(await auth.idToken == nil)
            #expect(await auth.loginContext == context, "the rest of the login part stays")
            let fields = Self.fields(try #require(try await auth.endSessionURL()))
            #expect(fields["id_token_hint"] == nil, "\(fields.keys.sorted())")
            #expect(fields["client_id"] == "vault")
            // The same session with an id token that reads: it is the hint.
            await auth.holdSession(userId: userId, loginContext: context, idToken: sent.token)
            #expect(Self.fields(try #require(try await auth.endSessionURL()))["id_token_hint"] == sent.token)
        }
    }

    @Test("an issuer whose discovery lists no end_session_endpoint: no URL")
    func notOffered() async throws {
        try await TestIssuer.with(idToken: ClientAuthenticationTests.valid) { issuer in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            let vault = try Vault(
                configuration: VaultConfiguration(
                    issuer: issuer.issuer,
                    clientId: "client",
                    keyServiceURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
                    storeDirectory: root.appending(path: "store")
                )
            )
            #expect(try await vault.auth.endSessionURL() == nil)
        }
    }
}

extension Auth {
    /// A session in memory (no envelope) whose refresh token carries `loginContext` and `idToken`: what a login
    /// leaves, without the refresh that would replace its id token.
    fileprivate func holdSession(userId: String, loginContext: LoginContext, idToken: String) {
        let token = RefreshToken(
            token: "rt",
            userId: userId,
            context: [:],
            client: nil,
            dpopKey: nil,
            loginContext: loginContext,
            idToken: idToken
        )
        session = ActiveSession(userId: userId, refreshToken: token, envelope: nil)
    }
}
