import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// The library refuses an empty password, and a new password under the configured minimum, before any work
/// or request; the default minimum keeps short PINs possible (the key service's lockout makes them safe).
@Suite("password rules", .timeLimit(.minutes(10)))
struct PasswordRulesTests {
    /// Requests the fixture's vault sent to the key service so far (`createkey` and `key`).
    static func keyServiceRequests(_ fixture: AuthFixture) -> Int {
        fixture.transport.count(endingWith: "/key") + fixture.transport.count(endingWith: "/createkey")
    }

    /// `fixture`'s configuration with another minimum password length.
    static func vault(_ fixture: AuthFixture, minimumPasswordLength: Int) throws -> Vault {
        let base = fixture.configuration
        let configuration = VaultConfiguration(
            issuer: base.issuer,
            clientId: base.clientId,
            keyServiceURL: base.keyServiceURL,
            storeDirectory: base.storeDirectory,
            opsLimit: base.opsLimit,
            memLimitBytes: base.memLimitBytes,
            minimumPasswordLength: minimumPasswordLength,
            now: base.now
        )
        return try Vault(configuration: configuration, transport: fixture.transport)
    }

    @Test("an empty password is invalidPassword before any Argon2id derivation or key-service request")
    func emptyPassword() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let vault = try fixture.restarted()
            let requests = Self.keyServiceRequests(fixture)
            // While the test holds every place Argon2id runs in, a derivation could not finish.
            let (errors, finishedWhileHeld) = await Argon2idPlaces.withAllHeld { () async -> [VaultError?] in
                let login = await SessionLockWaitTests.outcome { () async throws(VaultError) in
                    _ = try await vault.auth.loginWithPassword(password: "")
                }.value
                let open = await SessionLockWaitTests.outcome { () async throws(VaultError) in
                    _ = try await vault.userStorage.getStoredRefreshToken(userId: userId, password: "")
                }.value
                let deviceUnlock = await SessionLockWaitTests.outcome { () async throws(VaultError) in
                    try await vault.userStorage.enableDeviceUnlock(userId: userId, password: "")
                }.value
                return [login, open, deviceUnlock]
            }
            #expect(finishedWhileHeld, "an Argon2id derivation ran")
            for error in errors {
                #expect(error?.kind == .invalidPassword, "\(String(describing: error))")
                #expect(error?.description.contains("empty") == true)
                #expect(error?.isWrongPassword == false)
            }
            #expect(Self.keyServiceRequests(fixture) == requests)
            #expect(await vault.userStorage.consecutiveWrongPasswords(userId: userId) == 0)
            #expect(await !vault.auth.isLoggedIn)
        }
    }

    @Test("with a minimum of 6, a new password of 5 characters is refused before any key-service request")
    func minimumLength() async throws {
        try await AuthFixture.with { fixture in
            let vault = try Self.vault(fixture, minimumPasswordLength: 6)
            let userId = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            let token = try #require(await vault.auth.refreshToken)

            // Characters, not bytes: five 2-byte letters are still five.
            for short in ["12345", "ééééé"] {
                let requests = Self.keyServiceRequests(fixture)
                let viaAuth = await #expect(throws: VaultError.self) {
                    try await vault.auth.storeRefreshToken(withNewPassword: short)
                }
                let viaStorage = await #expect(throws: VaultError.self) {
                    try await vault.userStorage.storeRefreshToken(token, withNewPassword: short)
                }
                for error in [viaAuth, viaStorage] {
                    #expect(error?.kind == .invalidPassword)
                    #expect(error?.description.contains("6") == true, "\(String(describing: error))")
                }
                #expect(Self.keyServiceRequests(fixture) == requests)
            }
            #expect(await !vault.userStorage.hasStoredRefreshToken(userId: userId))

            try await vault.auth.storeRefreshToken(withNewPassword: "123456")
            let requests = Self.keyServiceRequests(fixture)
            let change = await #expect(throws: VaultError.self) {
                try await vault.userStorage.changePassword(userId: userId, from: "123456", to: "abcde")
            }
            #expect(change?.kind == .invalidPassword)
            #expect(Self.keyServiceRequests(fixture) == requests, "the old password was checked first")

            try await vault.userStorage.changePassword(userId: userId, from: "123456", to: "abcdéf")
            #expect(try await fixture.restarted().auth.loginWithPassword(password: "abcdéf").userId == userId)
        }
    }

    @Test("a 4-digit PIN works with the default configuration")
    func shortPIN() async throws {
        try await AuthFixture.with { fixture in
            #expect(fixture.configuration.minimumPasswordLength == 1)
            let userId = try await fixture.register(password: "1234")
            #expect(try await fixture.restarted().auth.loginWithPassword(password: "1234").userId == userId)
        }
    }

    @Test("a minimum of 0 still refuses an empty new password")
    func zeroMinimum() async throws {
        try await AuthFixture.with { fixture in
            let vault = try Self.vault(fixture, minimumPasswordLength: 0)
            _ = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.storeRefreshToken(withNewPassword: "")
            }
            #expect(error?.kind == .invalidPassword)
            #expect(Self.keyServiceRequests(fixture) == 0)
            #expect(try await vault.userStorage.availableUserIds == [])
        }
    }
}
