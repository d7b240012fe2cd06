@_spi(LoginTimings) import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

@Suite("Auth against KeyServiceMock's identity provider (real HTTP)", .tags(.alone, .races), .enabled(inTier: .alone))
struct AuthTests {
    @Test("the code flow returns the user id, and a password login afterwards returns a fresh access token")
    func registerThenLogin() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            #expect(userId == "demo-user")
            #expect(await fixture.vault.auth.currentUserId == "demo-user")

            let restarted = try fixture.restarted()
            let token = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(token.userId == "demo-user")
            #expect(token.jwt?.issuer == fixture.server.issuer.absoluteString)
            #expect(await restarted.auth.isLoggedIn)
            let timings = try #require(await restarted.auth.lastLoginTimings)
            #expect(timings.keyDerivation > .zero && timings.tokenEndpoint > .zero && timings.sealAndWrite > .zero)
        }
    }

    @Test("1,000 concurrent getAccessToken calls on an expired token make one token request and share its token")
    func singleFlight() async throws {
        try await AuthFixture.with(accessTokenLifetime: 300) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let first = try await auth.loginWithPassword(password: AuthFixture.password)
            fixture.clock.advance(by: 600)
            let before = fixture.transport.count(endingWith: "/token")

            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1000 { group.addTask { try await auth.getAccessToken().token } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(fixture.transport.count(endingWith: "/token") - before == 1)
            #expect(tokens.count == 1000)
            #expect(Set(tokens).count == 1)
            #expect(tokens[0] != first.token)
            // Still valid: no further request.
            _ = try await auth.getAccessToken()
            #expect(fixture.transport.count(endingWith: "/token") - before == 1)
        }
    }

    @Test("logout during a refresh: no caller gets a token, and the issuer refuses the rotated and the old token")
    func logoutDuringRefresh() async throws {
        try await AuthFixture.with(accessTokenLifetime: 300) { fixture in
            try await fixture.register()
            let held = HeldTransport(fixture.transport, holding: "/token")
            let auth = try Vault(configuration: fixture.configuration, transport: held).auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let old = try #require(await auth.refreshToken)
            fixture.clock.advance(by: 600)
            let before = fixture.transport.count(endingWith: "/token")

            held.arm()
            let callers = Task {
                await withTaskGroup(of: VaultError?.self) { group in
                    for _ in 0..<100 {
                        group.addTask {
                            do throws(VaultError) {
                                _ = try await auth.getAccessToken()
                                return nil
                            } catch {
                                return error
                            }
                        }
                    }
                    return await group.reduce(into: [VaultError?]()) { $0.append($1) }
                }
            }
            // The issuer has rotated the token; its answer waits while the logout begins.
            await held.arrived.wait()
            let logout = Task { try await auth.logout() }
            while await auth.isLoggedIn { await Task.yield() }
            held.released.give()
            _ = try await logout.value
            let errors = await callers.value

            #expect(errors.count == 100)
            #expect(errors.allSatisfy { $0?.kind == .notLoggedIn }, "no caller gets a token after the logout began")
            #expect(fixture.transport.count(endingWith: "/token") - before == 1)
            #expect(fixture.transport.count(endingWith: "/revoke") == 1)
            let answer = try #require(held.heldAnswer)
            let fields = try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
            let rotated = try #require(fields["refresh_token"] as? String)
            #expect(rotated != old.token)
            // The rotated token first: redeeming the old one is a reuse, which may revoke the family by itself.
            for token in [rotated, old.token] {
                let after = try await fixture.redeemDirectly(token)
                #expect(after.status == 400 && after.body.contains("invalid_grant"))
            }
            #expect(await !auth.isLoggedIn)
        }
    }

    @Test("the cached token is returned while valid for the leeway, and refreshed inside it")
    func leeway() async throws {
        try await AuthFixture.with(accessTokenLifetime: 300, leeway: 60) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let first = try await auth.loginWithPassword(password: AuthFixture.password)
            fixture.clock.advance(by: 200)
            #expect(try await auth.getAccessToken().token == first.token)
            fixture.clock.advance(by: 50)  // 50 s left, under the 60 s leeway
            #expect(try await auth.getAccessToken().token != first.token)
            let forced = try await auth.getAccessToken(forceRefresh: true)
            #expect(try await auth.getAccessToken().token == forced.token)
        }
    }

    @Test("a rotated refresh token is persisted: after a refresh and a restart, password login still works")
    func rotationPersisted() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let beforeRefresh = try #require(await auth.refreshToken)
            _ = try await auth.getAccessToken(forceRefresh: true)
            _ = try await auth.getAccessToken(forceRefresh: true)
            let latest = try #require(await auth.refreshToken)
            #expect(latest != beforeRefresh)

            // The issuer rejects reuse: an older token is dead, so only a persisted latest one can log in.
            let restarted = try fixture.restarted()
            let token = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(token.userId == "demo-user")
            let reuse = try await fixture.redeemDirectly(beforeRefresh.token)
            #expect(reuse.status == 400 && reuse.body.contains("invalid_grant"))
        }
    }

    @Test("logout revokes: the issuer then rejects the old refresh token; clearUser deletes the envelope")
    func logoutRevokes() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            let refreshToken = try #require(await auth.refreshToken)
            try await auth.logout(clearUser: true)
            #expect(await !auth.isLoggedIn)
            #expect(await auth.refreshToken == nil)
            #expect(fixture.transport.count(endingWith: "/revoke") == 1)
            let after = try await fixture.redeemDirectly(refreshToken.token)
            #expect(after.status == 400 && after.body.contains("invalid_grant"))
            #expect(try await fixture.vault.userStorage.availableUserIds.isEmpty)
            await #expect(throws: VaultError.self) { try await auth.getAccessToken() }
        }
    }

    @Test("when revocation cannot reach the issuer, logout says so as a network error and still clears local data")
    func logoutOffline() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            fixture.server.faults.set(.dropConnection, for: .all)
            let error = await #expect(throws: VaultError.self) { try await auth.logout(clearUser: true) }
            #expect(error?.isNetworkError == true)
            #expect(error?.kind != .revocationFailed, "the issuer never refused; it was not reached")
            #expect(error?.description.contains("not revoked") == true)
            #expect(await !auth.isLoggedIn)
            #expect(try await fixture.vault.userStorage.availableUserIds.isEmpty)
        }
    }

    @Test("when the issuer refuses to revoke, logout is revocationFailed with the status and still clears local data")
    func logoutRefused() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            fixture.server.faults.set(.internalServerError, for: .all)
            let error = await #expect(throws: VaultError.self) { try await auth.logout(clearUser: true) }
            #expect(error?.kind == .revocationFailed)
            #expect(error?.httpStatus == 500)
            #expect(error?.isNetworkError == false)
            #expect(await !auth.isLoggedIn)
            #expect(try await fixture.vault.userStorage.availableUserIds.isEmpty)
        }
    }

    @Test("invalid_grant from the token endpoint is loginExpired and ends the session")
    func invalidGrant() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            // Revoke the family behind the session's back (as an administrator or another device's logout would).
            let current = try #require(await auth.refreshToken)
            let revoked = try await Browser.postForm(
                fixture.server.issuer.appending(path: "protocol/openid-connect/revoke"),
                ["client_id": "vault", "token": current.token]
            )
            #expect(revoked.status == 200)

            let error = await #expect(throws: VaultError.self) { try await auth.getAccessToken(forceRefresh: true) }
            #expect(error?.kind == .loginExpired)
            #expect(error?.isLoginExpired == true)
            #expect(await !auth.isLoggedIn)
            let again = await #expect(throws: VaultError.self) { try await auth.getAccessToken() }
            #expect(again?.kind == .notLoggedIn)
        }
    }

    @Test("a bare 400 or 401 to a refresh (no OAuth error body) is loginExpired; a bare 403 is a refusal")
    func bareRefusalToRefresh() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            for (status, dead) in [(400, true), (401, true), (403, false)] {
                _ = try await auth.loginWithPassword(password: AuthFixture.password)
                fixture.server.faults.set(.bareStatus(status), for: .tokenEndpoint)
                let error = await #expect(throws: VaultError.self) { try await auth.getAccessToken(forceRefresh: true) }
                fixture.server.faults.set(nil, for: .tokenEndpoint)
                #expect(error?.isLoginExpired == dead, "HTTP \(status): \(String(describing: error))")
                #expect(await auth.isLoggedIn == !dead)
                if !dead { #expect(error?.kind == .serverRefused && error?.httpStatus == status) }
            }
        }
    }

    @Test("token endpoint failures have kinds: HTTP 500 refused, an undecodable 200 unexpected, a drop unreachable")
    func tokenEndpointErrors() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)

            fixture.server.faults.set(.internalServerError, for: .tokenEndpoint)
            let serverError = await #expect(throws: VaultError.self) {
                try await auth.getAccessToken(forceRefresh: true)
            }
            #expect(serverError?.kind == .serverRefused)
            #expect(serverError?.httpStatus == 500)
            #expect(serverError?.isKeyServiceError == false)
            fixture.server.faults.set(.undecodableBody, for: .tokenEndpoint)
            let garbage = await #expect(throws: VaultError.self) { try await auth.getAccessToken(forceRefresh: true) }
            #expect(garbage?.kind == .unexpectedAnswer)
            fixture.server.faults.set(.dropConnection, for: .tokenEndpoint)
            let dropped = await #expect(throws: VaultError.self) { try await auth.getAccessToken(forceRefresh: true) }
            #expect(dropped?.kind == .unreachable)
            #expect(dropped?.isNetworkError == true)
            #expect(dropped?.host == "127.0.0.1")
            // The session survived the failures and refreshes once the issuer answers again.
            fixture.server.faults.set(nil, for: .tokenEndpoint)
            #expect(await auth.isLoggedIn)
            _ = try await auth.getAccessToken(forceRefresh: true)
        }
    }

    @Test("discovery is fetched once and cached across logins and refreshes")
    func discoveryCached() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            _ = try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            _ = try await fixture.vault.auth.getAccessToken(forceRefresh: true)
            _ = try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            #expect(fixture.transport.count(endingWith: "/openid-configuration") == 1)
        }
    }

    @Test("wrong passwords through Auth: isWrongPassword, then locked on the third, right one refused after")
    func lockoutThroughAuth() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            for attempt in 1...3 {
                let error = await #expect(throws: VaultError.self) {
                    try await auth.loginWithPassword(password: "wrong \(attempt)")
                }
                #expect(error?.isWrongPassword == (attempt < 3))
                #expect(error?.isKeyLocked == (attempt == 3))
            }
            let error = await #expect(throws: VaultError.self) {
                try await auth.loginWithPassword(password: AuthFixture.password)
            }
            #expect(error?.isKeyLocked == true)
            #expect(fixture.transport.count(endingWith: "/token") == 1)  // only the code exchange
        }
    }

    @Test("device unlock logs in without the password")
    func deviceUnlockLogin() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            try await fixture.vault.userStorage.enableDeviceUnlock(userId: userId, password: AuthFixture.password)
            let token = try await fixture.restarted().auth.loginWithDeviceUnlock()
            #expect(token.userId == userId)
        }
    }
}

@Suite("Auth across processes and apps", .tags(.races))
struct AuthSharingTests {
    @Test("two vaults on one store (as two processes) logging in and refreshing at once keep the token family alive")
    func concurrentLogins() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let first = try fixture.restarted()
            let second = try fixture.restarted()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for vault in [first, second] {
                    group.addTask {
                        _ = try await vault.auth.loginWithPassword(password: AuthFixture.password)
                        for _ in 0..<3 { _ = try await vault.auth.getAccessToken(forceRefresh: true) }
                    }
                }
                try await group.waitForAll()
            }
            // Had either redeemed a token the other had already rotated, the issuer would have revoked the family.
            let third = try fixture.restarted()
            #expect(try await third.auth.loginWithPassword(password: AuthFixture.password).userId == "demo-user")
        }
    }

    @Test("an app's own redirect scheme is passed in through handleRedirect(url:)")
    func handleRedirect() async throws {
        let clock = ManualClock()
        var mock = KeyServiceMockConfiguration()
        mock.now = clock.dateProvider
        mock.clients = [MockClient(clientId: "app", redirectURIs: ["com.example.app:/oauth/callback"])]
        try await KeyServiceMockServer.withServer(mock) { server in
            try await TemporaryDirectory.with { root in
                let vault = try Vault(
                    configuration: VaultConfiguration(
                        issuer: server.issuer,
                        clientId: "app",
                        redirectURI: URL(string: "com.example.app:/oauth/callback")!,
                        keyServiceURL: server.keyServiceURL,
                        storeDirectory: root.appending(path: "store"),
                        opsLimit: VaultFixture.opsLimit,
                        memLimitBytes: VaultFixture.memLimitBytes,
                        now: clock.dateProvider
                    )
                )
                let auth = vault.auth
                #expect(await !auth.handleRedirect(url: URL(string: "com.example.app:/oauth/callback?code=x")!))
                let userId = try await auth.performOpenIDConnectFlow { url in
                    guard
                        let response = try? await TestTLS.transport().send(
                            HTTPRequest(method: "GET", url: url, timeout: 60)
                        ),
                        let location = response.headers["location"], let redirect = URL(string: location)
                    else { return }
                    #expect(await !auth.handleRedirect(url: URL(string: "com.other.app:/oauth/callback?code=x")!))
                    // Only the redirect URI itself: not a longer path that starts with the same text.
                    for lookalike in [
                        "com.example.app:/oauth/callbackx?code=x", "com.example.app:/oauth/callback/x?code=x",
                    ] {
                        #expect(await !auth.handleRedirect(url: URL(string: lookalike)!))
                    }
                    #expect(await auth.handleRedirect(url: redirect))
                }
                #expect(userId == "demo-user")
                #expect(await auth.isLoggedIn)
            }
        }
    }
}
