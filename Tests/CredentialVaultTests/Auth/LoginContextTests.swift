import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// The login's authentication context (`acr`, `amr`, `auth_time` of its id token, and the `acr_values` asked for)
/// and its latest id token are kept with the login, sealed with the refresh token: after a restart a password login
/// has them, `endSessionURL()` carries `id_token_hint`, and a refresh answer's new id token replaces both. Over real
/// HTTP against keyservice-mock, whose id tokens carry the `acr` and `amr` a test sets (``MockAuthentication``).
@Suite("The login's acr, amr, auth_time and id token kept with the login")
struct LoginContextTests {
    /// The query of `url` by name.
    static func fields(_ url: URL?) -> [String: String] {
        let items = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    @Test("acr, amr and auth_time are readable after a restart with the password, and id_token_hint is the latest")
    func afterRestart() async throws {
        try await AuthFixture.with(authenticationAge: 30) { fixture in
            fixture.server.authentication.set(acr: "urn:example:mfa", amr: ["pwd", "otp"])
            try await fixture.register()
            let atLogin = try #require(await fixture.vault.auth.loginContext)
            let loginIDToken = try #require(await fixture.vault.auth.idToken)
            #expect(atLogin.acr == "urn:example:mfa" && atLogin.amr == ["pwd", "otp"] && atLogin.acrMet)
            #expect(atLogin.authTime == loginIDToken["auth_time"])

            let later = try fixture.restarted()
            #expect(await later.auth.loginContext == nil, "nothing before the envelope is opened")
            _ = try await later.auth.loginWithPassword(password: AuthFixture.password)
            #expect(await later.auth.loginContext == atLogin)
            let latest = try #require(fixture.server.authentication.lastIDToken)
            #expect(await later.auth.idToken?.token == latest, "the password login's refresh brought the latest")
            let url = try await later.auth.endSessionURL()
            #expect(Self.fields(url)["id_token_hint"] == latest)
            #expect(Self.fields(url)["client_id"] == "vault")
        }
    }

    @Test("an acr that is not among the acr_values asked for: the login goes through, and acrMet says no")
    func acrNotMet() async throws {
        try await AuthFixture.with { fixture in
            fixture.server.authentication.set(acr: "silver", amr: ["pwd"])
            var configuration = fixture.configuration
            configuration.acrValues = ["gold", "platinum"]
            let vault = try Vault(configuration: configuration, transport: fixture.transport)
            _ = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            try await vault.auth.storeRefreshToken(withNewPassword: AuthFixture.password)
            let context = try #require(await vault.auth.loginContext)
            #expect(context.acr == "silver" && context.requestedACRValues == ["gold", "platinum"])
            #expect(!context.acrMet)
            // Kept with the login: a new process sees it too, without a new login at the issuer.
            let later = try fixture.restarted()
            _ = try await later.auth.loginWithPassword(password: AuthFixture.password)
            #expect(await later.auth.loginContext?.acrMet == false)
            #expect(await later.auth.loginContext?.requestedACRValues == ["gold", "platinum"])
        }
    }

    @Test("an acr among the acr_values asked for: acrMet")
    func acrMet() async throws {
        try await AuthFixture.with { fixture in
            fixture.server.authentication.set(acr: "gold", amr: nil)
            var configuration = fixture.configuration
            configuration.acrValues = ["gold"]
            let vault = try Vault(configuration: configuration, transport: fixture.transport)
            _ = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            let context = try #require(await vault.auth.loginContext)
            #expect(context.acrMet && context.amr.isEmpty)
        }
    }

    @Test("a refresh answer with a new id token replaces the kept context and id token, sealed for the next process")
    func refreshUpdates() async throws {
        try await AuthFixture.with { fixture in
            fixture.server.authentication.set(acr: "silver", amr: ["pwd"])
            try await fixture.register()
            let first = try #require(await fixture.vault.auth.idToken?.token)
            fixture.server.authentication.set(acr: "gold", amr: ["pwd", "hwk"])
            _ = try await fixture.vault.auth.getAccessToken(forceRefresh: true)
            let renewed = try #require(fixture.server.authentication.lastIDToken)
            #expect(renewed != first)
            #expect(await fixture.vault.auth.idToken?.token == renewed)
            #expect(await fixture.vault.auth.loginContext?.acr == "gold")
            #expect(await fixture.vault.auth.loginContext?.amr == ["pwd", "hwk"])
            // Sealed before the access token was handed out: the envelope opened without a refresh holds both.
            let userId = try #require(await fixture.vault.auth.currentUserId)
            let stored = try await fixture.vault.userStorage.getStoredRefreshToken(
                userId: userId,
                password: AuthFixture.password
            )
            #expect(stored.loginContext?.acr == "gold" && stored.loginContext?.amr == ["pwd", "hwk"])
        }
    }

    @Test(
        "a refresh answer's id token of another login (issuer, subject or audience) is dropped: the refresh succeeds, the login's id token and context stay",
        arguments: MockAuthentication.ForeignClaim.allCases
    )
    func foreignIDTokenDropped(claim: MockAuthentication.ForeignClaim) async throws {
        try await AuthFixture.with { fixture in
            fixture.server.authentication.set(acr: "silver", amr: ["pwd"])
            try await fixture.register()
            let first = try #require(await fixture.vault.auth.idToken?.token)
            // Were the foreign token taken, the context would read gold.
            fixture.server.authentication.set(acr: "gold", amr: ["pwd", "hwk"])
            fixture.server.authentication.issueForeign(claim)
            let token = try await fixture.vault.auth.getAccessToken(forceRefresh: true)
            #expect(!token.token.isEmpty)
            let foreign = try #require(fixture.server.authentication.lastIDToken)
            #expect(foreign != first, "the issuer did answer with an id token")
            #expect(await fixture.vault.auth.idToken?.token == first)
            #expect(await fixture.vault.auth.loginContext?.acr == "silver")
            // Nor was it sealed: the envelope opened without a refresh still holds the login's.
            let userId = try #require(await fixture.vault.auth.currentUserId)
            let stored = try await fixture.vault.userStorage.getStoredRefreshToken(
                userId: userId,
                password: AuthFixture.password
            )
            #expect(stored.loginContext?.acr == "silver")
            #expect(Self.fields(try await fixture.vault.auth.endSessionURL())["id_token_hint"] == first)
        }
    }

    @Test("an envelope sealed without a login context (record version 3 and before) opens, and a refresh fills it")
    func earlierRecordUpgrades() async throws {
        try await AuthFixture.with { fixture in
            fixture.server.authentication.set(acr: "silver", amr: ["pwd"])
            try await fixture.register()
            let userId = try #require(await fixture.vault.auth.currentUserId)
            let stored = try #require(await fixture.vault.auth.refreshToken)
            // The writer of the earlier versions: a refresh token sealed with neither an id token nor a context
            // (record version 1 here; `SealedLoginContextTests` opens versions 1 to 3 directly).
            let earlier = RefreshToken(token: stored.token, userId: userId, context: stored.context)
            try await fixture.vault.userStorage.storeRefreshToken(earlier, withNewPassword: AuthFixture.password)
            let opened = try await fixture.vault.userStorage.getStoredRefreshToken(
                userId: userId,
                password: AuthFixture.password
            )
            #expect(opened.loginContext == nil)
            let later = try fixture.restarted()
            #expect(Self.fields(try await later.auth.endSessionURL())["id_token_hint"] == nil, "no session yet")
            _ = try await later.auth.loginWithPassword(password: AuthFixture.password)
            #expect(await later.auth.loginContext?.acr == "silver", "the refresh's id token filled it")
            let hint = Self.fields(try await later.auth.endSessionURL())["id_token_hint"]
            #expect(hint != nil && hint == fixture.server.authentication.lastIDToken)
        }
    }
}
