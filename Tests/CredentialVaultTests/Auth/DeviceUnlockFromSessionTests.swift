import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// `Auth.enableDeviceUnlock()` turns device unlock on with what an open session already holds.
@Suite("device unlock turned on from an open session")
struct DeviceUnlockFromSessionTests {
    /// An Auth over the fixture's issuer and store, and the counter of its key-service calls.
    struct Counted {
        let auth: Auth
        let storage: UserStorage
        let keyService: CountingKeyService

        init(_ fixture: AuthFixture) throws {
            keyService = CountingKeyService(
                try HTTPKeyService(baseURL: fixture.configuration.keyServiceURL, transport: fixture.transport)
            )
            storage = UserStorage(
                keyService: keyService,
                directory: fixture.configuration.storeDirectory,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes,
                now: fixture.configuration.now
            )
            auth = Auth(configuration: fixture.configuration, userStorage: storage, transport: fixture.transport)
        }
    }

    @Test("after a password login it makes no key-service call, and a device login works afterwards")
    func afterPasswordLogin() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let counted = try Counted(fixture)
            _ = try await counted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(counted.keyService.total == 1)
            #expect(!(await counted.storage.hasDeviceUnlock(userId: userId)))

            try await counted.auth.enableDeviceUnlock()
            #expect(counted.keyService.total == 1)
            #expect(await counted.storage.hasDeviceUnlock(userId: userId))

            let restarted = try Counted(fixture)
            let token = try await restarted.auth.loginWithDeviceUnlock()
            #expect(token.userId == userId)
            #expect(await restarted.auth.isLoggedIn)
            #expect(restarted.keyService.count(.keyByLongSecret) == 1)
            #expect(restarted.keyService.total == 1)
        }
    }

    @Test("after the code flow and a new password it makes no key-service call beyond creating the key")
    func afterNewPassword() async throws {
        try await AuthFixture.with { fixture in
            let counted = try Counted(fixture)
            let userId = try await counted.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            // The code flow's tokens have no envelope yet: nothing to keep for device unlock.
            let early = await #expect(throws: VaultError.self) { try await counted.auth.enableDeviceUnlock() }
            #expect(early?.kind == .noUnlockedEnvelope)

            try await counted.auth.storeRefreshToken(withNewPassword: AuthFixture.password)
            #expect(counted.keyService.count(.createKey) == 1)
            #expect(counted.keyService.total == 1)
            try await counted.auth.enableDeviceUnlock()
            #expect(counted.keyService.total == 1)

            let token = try await fixture.restarted().auth.loginWithDeviceUnlock()
            #expect(token.userId == userId)
            #expect(await counted.storage.hasDeviceUnlock(userId: userId))
        }
    }

    @Test("without a session it is notLoggedIn and turns nothing on")
    func withoutSession() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let counted = try Counted(fixture)
            let error = await #expect(throws: VaultError.self) { try await counted.auth.enableDeviceUnlock() }
            #expect(error?.kind == .notLoggedIn)
            #expect(counted.keyService.total == 0)
            #expect(!(await counted.storage.hasDeviceUnlock(userId: userId)))

            _ = try await counted.auth.loginWithPassword(password: AuthFixture.password)
            try await counted.auth.logout()
            let afterLogout = await #expect(throws: VaultError.self) { try await counted.auth.enableDeviceUnlock() }
            #expect(afterLogout?.kind == .notLoggedIn)
            #expect(!(await counted.storage.hasDeviceUnlock(userId: userId)))
        }
    }
}
