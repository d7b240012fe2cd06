import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Tokens for one API (RFC 8707 `resource` on a refresh, RFC 8693 token exchange) over real HTTP against
/// KeyServiceMock: kept apart from the session's token, one request per resource at a time, and a refresh token the
/// issuer rotates in a scoped answer sealed as at every refresh.
@Suite("getAccessToken(resource:): tokens scoped to one API, apart from the session's")
struct ScopedTokenTests {
    static let api = URL(string: "https://api.example.com/fhir")!
    static let exchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

    @Test("the scoped token's aud is the resource and its scope the narrower one; the session's token is untouched")
    func audienceAndScope() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let main = try await auth.loginWithPassword(password: AuthFixture.password)
            let scoped = try await auth.getAccessToken(resource: Self.api, scopes: ["openid"])
            #expect(scoped["aud"] as String? == Self.api.absoluteString)
            #expect(scoped["scope"] as String? == "openid")
            #expect(main["aud"] as String? == "vault")
            #expect(scoped.token != main.token)
            #expect(scoped.userId == main.userId)
            let refreshes = fixture.server.tokenRequests(grantType: "refresh_token")
            #expect(try await auth.getAccessToken() == main, "the session's own token is still handed out")
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") == refreshes, "and not refreshed")
            #expect(await auth.sessionContext["scope"] != .string("openid"), "the scoped answer is not the login's")
        }
    }

    @Test("100 concurrent calls for one resource make one token request and share its token; it is kept while fresh")
    func singleFlightPerResource() async throws {
        try await AuthFixture.with(accessTokenLifetime: 300) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let before = fixture.server.tokenRequests(grantType: "refresh_token")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { try await auth.getAccessToken(resource: Self.api).token } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") - before == 1)
            #expect(tokens.count == 100 && Set(tokens).count == 1)
            // Fresh: no request. Another resource: its own request. Stale: one more.
            #expect(try await auth.getAccessToken(resource: Self.api).token == tokens[0])
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") - before == 1)
            let other = try await auth.getAccessToken(resource: URL(string: "https://other.example.com/")!)
            #expect(other["aud"] as String? == "https://other.example.com/")
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") - before == 2)
            fixture.clock.advance(by: 600)
            #expect(try await auth.getAccessToken(resource: Self.api).token != tokens[0])
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") - before == 3)
        }
    }

    @Test("a refresh token rotated in a scoped answer is sealed: the app after a restart logs in with it")
    func rotatedRefreshTokenPersisted() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let before = try #require(await auth.refreshToken)
            _ = try await auth.getAccessToken(resource: Self.api)
            let after = try #require(await auth.refreshToken)
            #expect(after.token != before.token, "the mock rotates at every refresh")
            // The issuer revokes the whole family when a used token comes back: only the rotated one opens it.
            let restarted = try fixture.restarted()
            let token = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(token["aud"] as String? == "vault")
        }
    }

    @Test("token exchange: one exchange request, the aud is the resource, no refresh and no rotation")
    func tokenExchange() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let main = try await auth.loginWithPassword(password: AuthFixture.password)
            #expect(try await auth.metadata().grantTypesSupported?.contains(Self.exchangeGrant) == true)
            let refreshes = fixture.server.tokenRequests(grantType: "refresh_token")
            let stored = try #require(await auth.refreshToken)
            let exchanged = try await auth.getAccessToken(
                resource: Self.api,
                scopes: ["openid"],
                method: .tokenExchange
            )
            #expect(exchanged["aud"] as String? == Self.api.absoluteString)
            #expect(exchanged["scope"] as String? == "openid")
            #expect(exchanged["sub"] as String? == main["sub"] as String?)
            #expect(fixture.server.tokenRequests(grantType: Self.exchangeGrant) == 1)
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") == refreshes)
            #expect(try #require(await auth.refreshToken).token == stored.token)
            // .automatic takes the exchange where discovery lists it; a fresh key, so one more exchange.
            let automatic = try await auth.getAccessToken(resource: Self.api, method: .automatic)
            #expect(automatic["aud"] as String? == Self.api.absoluteString)
            #expect(fixture.server.tokenRequests(grantType: Self.exchangeGrant) == 2)
            #expect(try await auth.getAccessToken() == main)
        }
    }

    @Test("a resource the issuer refuses is invalid_target in words; a URL with a fragment is refused before sending")
    func refusedResource() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let error = await #expect(throws: VaultError.self) {
                try await auth.getAccessToken(resource: URL(string: "http://api.example.com/")!)
            }
            #expect(error?.kind == .resourceRefused)
            #expect(error?.description.contains("refused the resource http://api.example.com/") == true)
            #expect(await auth.isLoggedIn, "a refused resource does not end the login")
            let requests = fixture.transport.count(endingWith: "/token")
            let fragment = await #expect(throws: VaultError.self) {
                try await auth.getAccessToken(resource: URL(string: "https://api.example.com/#x")!)
            }
            #expect(fragment?.kind == .resourceRefused)
            #expect(fixture.transport.count(endingWith: "/token") == requests)
            _ = try await auth.getAccessToken(resource: Self.api)
        }
    }
}
