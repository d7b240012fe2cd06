import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Redirect URIs as configured: a loopback one with a port is used exactly (for issuers that match exactly), a
/// taken port is a clear error, the authorization response's `iss` is checked (RFC 9207), and no wait for an
/// app's redirect outlives the timeout. Over real HTTP against KeyServiceMock, which matches loopback redirect
/// URIs on any port.
@Suite("Redirect URIs and the authorization response")
struct RedirectURITests {
    /// A vault on `fixture`'s issuer with another redirect URI.
    static func vault(_ fixture: AuthFixture, redirectURI: URL) throws -> Vault {
        var configuration = fixture.configuration
        configuration.redirectURI = redirectURI
        return try Vault(configuration: configuration, transport: fixture.transport)
    }

    static func redirectURI(in authorizationURL: URL?) -> String? {
        authorizationURL.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems }?
            .first { $0.name == "redirect_uri" }?.value
    }

    @Test("a configured port is listened on and sent exactly, and the login completes through it")
    func fixedPort() async throws {
        try await AuthFixture.with { fixture in
            let port = try FreePort.pick()
            let configured = "http://127.0.0.1:\(port)/callback"
            let vault = try Self.vault(fixture, redirectURI: try #require(URL(string: configured)))
            let seen = URLBox()
            let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                seen.set(url)
                await Browser.follow(url)
            }
            #expect(userId == "demo-user")
            #expect(Self.redirectURI(in: seen.get()) == configured)
        }
    }

    @Test("without a port the system picks one at each login; the host and path stay as configured")
    func chosenPort() async throws {
        try await AuthFixture.with { fixture in
            let vault = try Self.vault(fixture, redirectURI: try #require(URL(string: "http://127.0.0.1/callback")))
            let seen = URLBox()
            _ = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                seen.set(url)
                await Browser.follow(url)
            }
            let sent = try #require(Self.redirectURI(in: seen.get()).flatMap(URL.init(string:)))
            #expect(sent.host == "127.0.0.1" && sent.path == "/callback" && (sent.port ?? 0) > 0)
        }
    }

    @Test("a configured port with no path: the redirect to / ends the login")
    func fixedPortNoPath() async throws {
        var mock = KeyServiceMockConfiguration()
        mock.clients = [MockClient(clientId: "vault", redirectURIs: ["http://127.0.0.1"])]
        try await KeyServiceMockServer.withServer(mock) { server in
            try await TemporaryDirectory.with { root in
                let configured = "http://127.0.0.1:\(try FreePort.pick())"
                let vault = try Vault(
                    configuration: VaultConfiguration(
                        issuer: server.issuer,
                        clientId: "vault",
                        redirectURI: try #require(URL(string: configured)),
                        keyServiceURL: server.keyServiceURL,
                        storeDirectory: root.appending(path: "store")
                    )
                )
                let seen = URLBox()
                let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    seen.set(url)
                    await Browser.follow(url)
                }
                #expect(userId == "demo-user")
                #expect(Self.redirectURI(in: seen.get()) == configured)
            }
        }
    }

    @Test("an IPv6 loopback redirect URI ([::1]) is listened on over IPv6 and sent as configured")
    func ipv6Loopback() async throws {
        var mock = KeyServiceMockConfiguration()
        mock.clients = [MockClient(clientId: "vault", redirectURIs: ["http://[::1]/callback"])]
        try await KeyServiceMockServer.withServer(mock) { server in
            try await TemporaryDirectory.with { root in
                let port = try FreePort.pick()
                let configured = "http://[::1]:\(port)/callback"
                let vault = try Vault(
                    configuration: VaultConfiguration(
                        issuer: server.issuer,
                        clientId: "vault",
                        redirectURI: try #require(URL(string: configured)),
                        keyServiceURL: server.keyServiceURL,
                        storeDirectory: root.appending(path: "store")
                    )
                )
                let seen = URLBox()
                let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    seen.set(url)
                    // FoundationNetworking refuses IPv6 literal URLs (NSURLErrorBadURL), so the issuer's redirect
                    // is delivered to [::1] over a plain IPv6 socket, as a browser would send it.
                    guard
                        let answer = try? await TestTLS.transport().send(
                            HTTPRequest(method: "GET", url: url, timeout: 60)
                        ),
                        let location = answer.headers["location"].flatMap(URLComponents.init(string:)),
                        let port = location.port
                    else { return }
                    let target = location.percentEncodedPath + "?" + (location.percentEncodedQuery ?? "")
                    _ = try? await onOwnThread { try IPv6Loopback.get(target, port: UInt16(port)) }
                }
                #expect(userId == "demo-user")
                #expect(Self.redirectURI(in: seen.get()) == configured)
            }
        }
    }

    @Test("a configured port another program holds is a clear error before the browser is asked")
    func portTaken() async throws {
        try await AuthFixture.with { fixture in
            let busy = try FreePort.Held()
            let vault = try Self.vault(
                fixture,
                redirectURI: try #require(URL(string: "http://127.0.0.1:\(busy.port)/callback"))
            )
            let presented = URLBox()
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in presented.set(url) }
            }
            #expect(error?.kind == .openIDConnectFailed)
            #expect(error?.description.contains("127.0.0.1:\(busy.port)") == true, "\(String(describing: error))")
            #expect(presented.get() == nil)
            withExtendedLifetime(busy) {}
        }
    }

    @Test("a redirect whose iss names another issuer is refused (RFC 9207), though its state is right")
    func mixUp() async throws {
        try await AuthFixture.with { fixture in
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    let state =
                        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
                        .first { $0.name == "state" }?.value ?? ""
                    await Browser.deliver(to: url, query: "code=stolen&state=\(state)&iss=https%3A%2F%2Fevil.example")
                }
            }
            #expect(error?.kind == .openIDConnectFailed)
            #expect(error?.description.contains("RFC 9207") == true, "\(String(describing: error))")
            #expect(await !fixture.vault.auth.isLoggedIn)
        }
    }

    @Test("a wait for an app's redirect ends at the timeout, naming the redirect URI to register")
    func appRedirectTimeout() async throws {
        try await AuthFixture.with { fixture in
            let vault = try Self.vault(fixture, redirectURI: try #require(URL(string: "com.example.app:/callback")))
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(1)) { _ in }
            }
            #expect(error?.kind == .openIDConnectFailed)
            #expect(error?.description.contains("register exactly com.example.app:/callback") == true)
            #expect(await !vault.auth.handleRedirect(url: URL(string: "com.example.app:/callback?code=late")!))
        }
    }
}
