import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Issue 21, item 5: an access token's freshness is measured on the device's monotonic clock for the lifetime the
/// issuer stated, so a device wall clock minutes off neither refreshes at every call nor hands out an expired token,
/// and a token that lives less than twice the leeway is not refreshed at every call either.
@Suite("access-token freshness does not depend on the device's wall clock")
struct ClockSkewTests {
    /// A Vault on `fixture`'s store and issuer whose wall clock is `skew` seconds off the issuer's; its monotonic clock
    /// moves with the fixture's clock, as a device's does with real time.
    static func skewedVault(_ fixture: AuthFixture, skew: TimeInterval) throws -> Vault {
        var configuration = fixture.configuration
        let clock = fixture.clock
        configuration.now = { clock.now.addingTimeInterval(skew) }
        return try Vault(configuration: configuration, transport: fixture.transport)
    }

    /// Calls `getAccessToken()` `calls` times, `every` seconds of the issuer's time apart; returns the token requests
    /// the issuer answered meanwhile and the tokens handed out past their `exp` (on the issuer's clock).
    static func calls(
        _ calls: Int,
        every interval: TimeInterval,
        on auth: Auth,
        _ fixture: AuthFixture
    ) async throws -> (refreshes: Int, expired: Int) {
        let before = fixture.server.tokenRequests(grantType: "refresh_token")
        var expired = 0
        for _ in 0..<calls {
            fixture.clock.advance(by: interval)
            let token = try await auth.getAccessToken()
            if let expiry = token.expireDate, expiry <= fixture.clock.now { expired += 1 }
        }
        return (fixture.server.tokenRequests(grantType: "refresh_token") - before, expired)
    }

    @Test(
        "a device clock ten minutes off refreshes at most once per token lifetime and never hands out an expired token",
        arguments: [600.0, -600.0]
    )
    func skewedDeviceClock(skew: TimeInterval) async throws {
        try await AuthFixture.with(accessTokenLifetime: 300, leeway: 60) { fixture in
            try await fixture.register()
            let auth = try Self.skewedVault(fixture, skew: skew).auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            // Two lifetimes (600 s), a call every 10 s.
            let (refreshes, expired) = try await Self.calls(60, every: 10, on: auth, fixture)
            #expect(refreshes <= 2, "\(refreshes) refreshes in two token lifetimes")
            #expect(refreshes >= 2, "a token was kept past three quarters of its life")
            #expect(expired == 0, "\(expired) expired tokens handed out")
        }
    }

    @Test(
        "a 2-second token with the default 60-second leeway is kept for part of its life, not refreshed at every call"
    )
    func shortLivedToken() async throws {
        try await AuthFixture.with(accessTokenLifetime: 2, leeway: 60) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            // 20 calls over 2 s, as a paged search would make them.
            let (refreshes, expired) = try await Self.calls(20, every: 0.1, on: auth, fixture)
            #expect(refreshes <= 3, "\(refreshes) refreshes for 20 calls in one 2 s lifetime")
            #expect(expired == 0, "\(expired) expired tokens handed out")
        }
    }
}
