import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Every change of a stored login holds the store's session lock, as a login and a refresh do: while another
/// holder keeps it, a change waits, sending nothing and writing nothing. The holder here is the test; the
/// waiting change is cancelled, which ends a wait with `.cancelled` (no clock involved).
@Suite("every change of a stored login waits for the session lock", .timeLimit(.minutes(10)))
struct SessionLockCoverageTests {
    /// A public call that changes a stored login.
    enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case changePassword
        case storeWithNewPassword
        case storeWithExistingPassword
        case authStoreWithNewPassword
        case authEnableDeviceUnlock
        case enableDeviceUnlock
        case disableDeviceUnlock
        case clear

        var testDescription: String {
            switch self {
            case .changePassword: "UserStorage.changePassword"
            case .storeWithNewPassword: "UserStorage.storeRefreshToken(_:withNewPassword:)"
            case .storeWithExistingPassword: "UserStorage.storeRefreshToken(_:withExistingPassword:)"
            case .authStoreWithNewPassword: "Auth.storeRefreshToken(withNewPassword:)"
            case .authEnableDeviceUnlock: "Auth.enableDeviceUnlock"
            case .enableDeviceUnlock: "UserStorage.enableDeviceUnlock"
            case .disableDeviceUnlock: "UserStorage.disableDeviceUnlock"
            case .clear: "UserStorage.clear"
            }
        }

        /// Runs the change for `userId` in `vault`, whose Auth has a session with the unlocked envelope.
        func run(_ vault: Vault, userId: String) async throws(VaultError) {
            let storage = vault.userStorage
            let password = AuthFixture.password
            let another = RefreshToken(token: "another refresh token", userId: userId)
            switch self {
            case .changePassword: try await storage.changePassword(userId: userId, from: password, to: "new password")
            case .storeWithNewPassword: try await storage.storeRefreshToken(another, withNewPassword: "new password")
            case .storeWithExistingPassword:
                try await storage.storeRefreshToken(another, withExistingPassword: password)
            case .authStoreWithNewPassword: try await vault.auth.storeRefreshToken(withNewPassword: "new password")
            case .authEnableDeviceUnlock: try await vault.auth.enableDeviceUnlock()
            case .enableDeviceUnlock: try await storage.enableDeviceUnlock(userId: userId, password: password)
            case .disableDeviceUnlock: try await storage.disableDeviceUnlock(userId: userId)
            case .clear: try await storage.clear(userId: userId)
            }
        }
    }

    @Test(
        "while another holder keeps the session lock, the change waits: cancelled, it sent and wrote nothing",
        arguments: Change.allCases
    )
    func waitsForTheLock(change: Change) async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            if change == .disableDeviceUnlock { try await fixture.vault.auth.enableDeviceUnlock() }
            let store = try #require(fixture.configuration.storeDirectory)
            let before = try StoreSnapshot(of: store)
            let requests = fixture.transport.count(endingWith: "")

            let holder = try await AdvisoryLock.acquire(path: fixture.sessionLockPath, timeout: .seconds(1))
            let waiting = SessionLockWaitTests.outcome { () async throws(VaultError) in
                try await change.run(fixture.vault, userId: userId)
            }
            waiting.cancel()
            let error = await waiting.value
            #expect(error?.kind == .cancelled, "\(String(describing: error))")
            #expect(try StoreSnapshot(of: store) == before, "the store changed while another process held the lock")
            #expect(fixture.transport.count(endingWith: "") == requests, "a request went out while the lock was held")
            #expect(await SessionLockWaitTests.isHeld(fixture.sessionLockPath))

            // Once the lock is free the same change goes through and changes the store: what stopped it was the wait.
            holder.release()
            try await change.run(fixture.vault, userId: userId)
            #expect(try StoreSnapshot(of: store) != before)
        }
    }
}
