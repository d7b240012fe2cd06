import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

/// Locked or not is the key service's word. The third wrong password in a row on this device is reported as
/// locked (the key service locks on it), worded as what this device knows; only the key service's own answer
/// is a confirmed lock, and the local count alone never gives up on a login.
@Suite("locked or not: the key service's word")
struct LockWordingTests {
    let token = RefreshToken(token: "refresh-\(UUID().uuidString)", userId: "erin")
    let password = "lock wording password"

    /// Another device with the same login: a store of its own holding a copy of `vault`'s envelope.
    static func secondDevice(of vault: VaultFixture) throws -> UserStorage {
        let directory = vault.root.appending(path: "second-device")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        chmod(directory.path, 0o700)
        let envelope = try vault.envelopeURL()
        let copy = directory.appending(path: envelope.lastPathComponent)
        try Data(contentsOf: envelope).write(to: copy)
        chmod(copy.path, 0o600)
        return UserStorage(
            keyService: vault.keyService,
            directory: directory,
            opsLimit: VaultFixture.opsLimit,
            memLimitBytes: VaultFixture.memLimitBytes
        )
    }

    @Test("wrong, wrong: wrong passwords; the third: locked as this device knows it; then the key service says locked")
    func threeWrongPasswords() async throws {
        try await VaultFixture.with { vault in
            let storage = vault.storage
            try await storage.storeRefreshToken(token, withNewPassword: password)
            for attempt in 1...2 {
                let error = await #expect(throws: VaultError.self) {
                    try await storage.getStoredRefreshToken(userId: token.userId, password: "wrong \(attempt)")
                }
                #expect(error?.isWrongPassword == true)
                #expect(error?.isKeyLocked == false)
                #expect(error?.isKeyLockConfirmed == false)
            }

            let third = await #expect(throws: VaultError.self) {
                try await storage.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(third?.isKeyLocked == true)
            #expect(third?.isKeyLockConfirmed == false)
            #expect(third?.isWrongPassword == false)
            #expect(third?.isKeyServiceError == true)
            #expect(third?.description.contains("this device") == true, "\(String(describing: third))")

            let fourth = await #expect(throws: VaultError.self) {
                try await storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(fourth?.isKeyLocked == true)
            #expect(fourth?.isKeyLockConfirmed == true)
            #expect(fourth?.description.contains("this device") == false, "\(String(describing: fourth))")
        }
    }

    @Test(
        "this device's third wrong password is a guess: when another device's success reset the count, it still opens"
    )
    func localCountIsNotTheLock() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let other = try Self.secondDevice(of: vault)
            await vault.wrongPasswords(2, userId: token.userId)
            // The other device's right password resets the key service's count, not this device's.
            #expect(try await other.getStoredRefreshToken(userId: token.userId, password: password) == token)

            let third = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(third?.isKeyLocked == true)
            #expect(third?.isKeyLockConfirmed == false)
            // The key service never locked the key, and the login was not given up on.
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
            #expect(await vault.storage.consecutiveWrongPasswords(userId: token.userId) == 0)
            #expect(await vault.storage.hasStoredRefreshToken(userId: token.userId))
        }
    }

    @Test("wrong passwords on two devices add up at the key service: its locked answer is the fact on both")
    func twoDevicesLockTogether() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let other = try Self.secondDevice(of: vault)
            await vault.wrongPasswords(2, userId: token.userId)
            // The key service's third in a row; this device has seen one, and says what it was told.
            let first = await #expect(throws: VaultError.self) {
                try await other.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(first?.isWrongPassword == true)
            #expect(first?.isKeyLocked == false)
            for device in [other, vault.storage] {
                let error = await #expect(throws: VaultError.self) {
                    try await device.getStoredRefreshToken(userId: token.userId, password: password)
                }
                #expect(error?.isKeyLocked == true)
                #expect(error?.isKeyLockConfirmed == true)
            }
        }
    }

    @Test("a password check whose connection drops reaches the key service once and counts no wrong password")
    func droppedConnection() async throws {
        let log = ServerRequestLog()
        try await VaultFixture.with(log.configuration()) { vault in
            let transport = CountingTransport()
            let storage = UserStorage(
                keyService: try HTTPKeyService(baseURL: vault.server.keyServiceURL, transport: transport),
                directory: vault.directory,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            try await storage.storeRefreshToken(token, withNewPassword: password)
            // One typo first; its connection stays open and the next check reuses it.
            let typo = await #expect(throws: VaultError.self) {
                try await storage.getStoredRefreshToken(userId: token.userId, password: "wrong 1")
            }
            #expect(typo?.isWrongPassword == true)
            let sent = transport.count(endingWith: "/key")
            let received = log.count(endingWith: "/key")
            #expect(received == sent)

            vault.server.faults.set(.dropConnection, for: .keyService)
            let dropped = await #expect(throws: VaultError.self) {
                try await storage.getStoredRefreshToken(userId: token.userId, password: "wrong 2")
            }
            vault.server.faults.set(nil, for: .keyService)
            #expect(dropped?.isNetworkError == true, "\(String(describing: dropped))")
            #expect(dropped?.isKeyServiceError == true)
            #expect(dropped?.isWrongPassword == false)
            #expect(dropped?.isKeyLocked == false)
            #expect(transport.count(endingWith: "/key") == sent + 1, "the library sent the check again")
            #expect(log.count(endingWith: "/key") == received + 1, "the check reached the key service more than once")
            #expect(await storage.consecutiveWrongPasswords(userId: token.userId) == 1)

            // The typo before the drop and one after are two in a row, not three: the right password opens.
            let second = await #expect(throws: VaultError.self) {
                try await storage.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(second?.isWrongPassword == true)
            #expect(try await storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
        }
    }

    @Test("a password check that cannot connect is sent a second time, and only then reported")
    func neverConnected() async throws {
        try await RefusingPort.with { refusing in
            let transport = CountingTransport()
            let keyService = try HTTPKeyService(
                baseURL: refusing.appending(path: "auth/realms/demo/keyservice/v1"),
                transport: transport
            )
            let error = await #expect(throws: VaultError.self) {
                try await keyService.getKey(keyId: "any", secret: SecureBytes(Data("c2VjcmV0".utf8)))
            }
            #expect(error?.isNetworkError == true)
            #expect(error?.isKeyServiceError == true)
            #expect(transport.count(endingWith: "/key") == 2)
        }
    }
}
