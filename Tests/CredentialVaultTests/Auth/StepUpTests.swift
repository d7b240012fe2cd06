import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Step-up at login (OpenID Connect Core 1.0 section 3.1.2.1): `max_age` with the id token's `auth_time` checked
/// (section 3.1.3.7 item 13), `acr_values`, `login_hint`, and extra authorization parameters. Over real HTTP
/// against keyservice-mock, whose id tokens carry `auth_time` (set back by `authenticationAge` to play an issuer
/// that did not ask the user again).
@Suite("Step-up: max_age with auth_time checked, acr_values, login_hint, extra parameters")
struct StepUpTests {
    /// A vault of `fixture` with `adjust` applied to its configuration.
    static func vault(_ fixture: AuthFixture, _ adjust: (inout VaultConfiguration) -> Void) throws -> Vault {
        var configuration = fixture.configuration
        adjust(&configuration)
        return try Vault(configuration: configuration, transport: fixture.transport)
    }

    @Test("the authorization request carries max_age, acr_values, login_hint and the extra parameters")
    func request() async throws {
        try await AuthFixture.with { fixture in
            let vault = try Self.vault(fixture) {
                $0.maxAge = 300
                $0.acrValues = ["urn:mace:incommon:iap:silver", "mfa"]
                $0.loginHint = "demo@example.org"
                $0.authorizationParameters = ["ui_locales": "da", "client_id": "intruder", "audience": "config"]
            }
            let seen = URLBox()
            _ = try await vault.auth.performOpenIDConnectFlow(authorizationParameters: ["audience": "call"]) { url in
                seen.set(url)
                await Browser.follow(url)
            }
            let items = URLComponents(url: try #require(seen.get()), resolvingAgainstBaseURL: false)?.queryItems ?? []
            let fields = Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
            #expect(fields["max_age"] == "300")
            #expect(fields["acr_values"] == "urn:mace:incommon:iap:silver mfa")
            #expect(fields["login_hint"] == "demo@example.org")
            #expect(fields["ui_locales"] == "da")
            #expect(fields["client_id"] == "vault", "a standard parameter is never replaced")
            #expect(fields["audience"] == "call", "the call's parameters win over the configuration's")
            #expect(await vault.auth.idToken?["auth_time"] as Int? != nil)
        }
    }

    @Test("max_age with a fresh authentication: the login goes through")
    func fresh() async throws {
        try await AuthFixture.with(authenticationAge: 30) { fixture in
            let vault = try Self.vault(fixture) { $0.maxAge = 60 }
            let userId = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            #expect(await vault.auth.currentUserId == userId)
        }
    }

    @Test(
        "max_age with a stale auth_time: authenticationTooOld in words, nothing kept",
        arguments: [(600.0, 60), (120.0, 0)]
    )
    func stale(age: TimeInterval, maxAge: Int) async throws {
        try await AuthFixture.with(authenticationAge: age) { fixture in
            let vault = try Self.vault(fixture) { $0.maxAge = maxAge }
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            }
            #expect(error?.kind == .authenticationTooOld)
            #expect(error?.reason.contains("max_age") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("\(Int(age)) s ago") == true, "\(String(describing: error))")
            #expect(await vault.auth.currentUserId == nil)
        }
    }

    @Test("a max_age that is not a whole number of seconds is a configuration error, with no token request")
    func badMaxAge() async throws {
        try await AuthFixture.with { fixture in
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performOpenIDConnectFlow(authorizationParameters: ["max_age": "-5"]) {
                    url in await Browser.follow(url)
                }
            }
            #expect(error?.isConfigurationError == true)
            #expect(fixture.transport.count(endingWith: "/token") == 0)
        }
    }
}
