import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("UserStorage over KeyServiceMock (real HTTP)")
struct UserStorageTests {
    let token = RefreshToken(token: "refresh-token-\(UUID().uuidString)", userId: "alice@example.com")
    let password = "correct horse"

    @Test("a token stored with a new password opens with the same password")
    func storeThenGet() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let opened = try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            #expect(opened == token)
            #expect(try await vault.storage.availableUserIds == [token.userId])
            #expect(await vault.storage.hasStoredRefreshToken(userId: token.userId))
            // A second storage on the same directory (as a second process would) opens it too.
            #expect(
                try await vault.secondStorage().getStoredRefreshToken(userId: token.userId, password: password) == token
            )
        }
    }

    @Test("a wrong password is isWrongPassword; the third locks the key, and the right one is refused after")
    func lockout() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            for attempt in 1...2 {
                let error = await #expect(throws: VaultError.self) {
                    try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong \(attempt)")
                }
                #expect(error?.isWrongPassword == true)
                #expect(error?.isKeyLocked == false)
                #expect(error?.isKeyServiceError == true)
            }
            let third = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(third?.isKeyLocked == true)
            let fourth = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(fourth?.isKeyLocked == true)
            #expect(fourth?.isWrongPassword == false)
        }
    }

    @Test("a right password between wrong ones resets the count")
    func successResetsCount() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            for _ in 0..<3 {
                for _ in 0..<2 {
                    _ = try? await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong")
                }
                #expect(
                    try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token
                )
            }
        }
    }

    @Test("the right password against a key service that returns another key: envelopeDidNotOpen, or wrongKey by id")
    func anotherKey() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let other = try await vault.keyService.createKey(secret: SecureBytes(Data("another-secret".utf8)))

            // A key service that answers for the asked key id with the bytes of another real key.
            let swapped = UserStorage(
                keyService: SwappingKeyService(real: vault.keyService, replacement: other.key, keepKeyId: true),
                directory: vault.directory
            )
            let error = await #expect(throws: VaultError.self) {
                try await swapped.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(error?.kind == .envelopeDidNotOpen)
            // One that answers with another key id is caught before any decryption.
            let relabelled = UserStorage(
                keyService: SwappingKeyService(real: vault.keyService, replacement: other.key, keepKeyId: false),
                directory: vault.directory
            )
            let relabelledError = await #expect(throws: VaultError.self) {
                try await relabelled.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(relabelledError?.kind == .wrongKey)
            #expect(relabelledError?.isKeyServiceError == true)
        }
    }

    @Test("storing with the existing password replaces the token in the same envelope")
    func existingPassword() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let keyIdBefore = try Data(contentsOf: vault.envelopeURL())
            let rotated = RefreshToken(token: "rotated-\(UUID().uuidString)", userId: token.userId)
            try await vault.storage.storeRefreshToken(rotated, withExistingPassword: password)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == rotated)
            let before = try JSONSerialization.jsonObject(with: keyIdBefore) as? [String: Any]
            let after = try JSONSerialization.jsonObject(with: Data(contentsOf: vault.envelopeURL())) as? [String: Any]
            #expect(before?["keyId"] as? String == after?["keyId"] as? String)
            #expect(before?["nonce"] as? String != after?["nonce"] as? String)

            let error = await #expect(throws: VaultError.self) {
                try await vault.storage.storeRefreshToken(token, withExistingPassword: "wrong")
            }
            #expect(error?.isWrongPassword == true)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == rotated)
        }
    }

    @Test("changing the password: the new one opens, the old one is a wrong password")
    func changePassword() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            try await vault.storage.changePassword(userId: token.userId, from: password, to: "new password")
            #expect(
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "new password") == token
            )
            let error = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(error?.isWrongPassword == true)
            let wrongOld = await #expect(throws: VaultError.self) {
                try await vault.storage.changePassword(userId: token.userId, from: "nope", to: "other")
            }
            #expect(wrongOld?.isWrongPassword == true)
        }
    }

    @Test("after clear(userId:) nothing of that user remains in the store directory")
    func clearLeavesNothing() async throws {
        try await VaultFixture.with { vault in
            let bob = RefreshToken(token: "bob-token", userId: "bob")
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            try await vault.storage.enableDeviceUnlock(userId: token.userId, password: password)
            try await vault.storage.storeRefreshToken(bob, withNewPassword: "bob password")
            let before = try vault.storeFiles()

            try await vault.storage.clear(userId: token.userId)

            let after = try vault.storeFiles()
            #expect(after.count < before.count)
            for name in after {
                #expect(!name.contains(token.userId))
                let contents = try Data(contentsOf: vault.directory.appending(path: name))
                #expect(contents.range(of: Data(token.userId.utf8)) == nil, "\(name) still names the cleared user")
            }
            #expect(try await vault.storage.availableUserIds == ["bob"])
            #expect(!(await vault.storage.hasStoredRefreshToken(userId: token.userId)))
            #expect(!(await vault.storage.hasDeviceUnlock(userId: token.userId)))
            #expect(try await vault.storage.getStoredRefreshToken(userId: "bob", password: "bob password") == bob)
            let error = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(error?.kind == .notRegistered)
            #expect(error?.isNotRegistered == true)
        }
    }

    @Test("one user's envelope renamed to another user's name fails, without a key-service attempt")
    func renamedEnvelope() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let aliceFile = try vault.envelopeURL()
            try await vault.storage.storeRefreshToken(
                RefreshToken(token: "bob-token", userId: "bob"),
                withNewPassword: password
            )
            let bobFile = try vault.storeFiles().filter { $0.hasSuffix(".vault") && $0 != aliceFile.lastPathComponent }
            try #require(bobFile.count == 1)
            let bobURL = vault.directory.appending(path: bobFile[0])
            try FileManager.default.removeItem(at: bobURL)
            try FileManager.default.copyItem(at: aliceFile, to: bobURL)

            for _ in 0..<4 {
                let error = await #expect(throws: VaultError.self) {
                    try await vault.storage.getStoredRefreshToken(userId: "bob", password: password)
                }
                #expect(error?.kind == .damagedRecord)
                #expect(error?.isStorageError == true)
            }
            // Four refusals made no attempt at the key service: alice's key is not locked.
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
        }
    }

    @Test("device unlock opens the token without the password, and is refused once the key is locked")
    func deviceUnlock() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            #expect(!(await vault.storage.hasDeviceUnlock(userId: token.userId)))
            let off = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId)
            }
            #expect(off?.isDeviceUnlockFailed == true)

            try await vault.storage.enableDeviceUnlock(userId: token.userId, password: password)
            #expect(await vault.storage.hasDeviceUnlock(userId: token.userId))
            #expect(try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId) == token)

            // Changing the password keeps device unlock working, with the new key.
            try await vault.storage.changePassword(userId: token.userId, from: password, to: "second password")
            #expect(try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId) == token)

            try await vault.storage.disableDeviceUnlock(userId: token.userId)
            let disabled = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId)
            }
            #expect(disabled?.isDeviceUnlockFailed == true)

            try await vault.storage.enableDeviceUnlock(userId: token.userId, password: "second password")
            await vault.wrongPasswords(3, userId: token.userId)
            let locked = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId)
            }
            #expect(locked?.isKeyLocked == true)
        }
    }

    @Test("a new password replaces a damaged envelope but never one of an unknown format")
    func formats() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let url = try vault.envelopeURL()

            let newer = Data(#"{"format": "credential-vault/v9", "userId": "alice@example.com", "future": true}"#.utf8)
            try newer.write(to: url)
            let readError = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(readError?.kind == .unsupportedFormat)
            #expect(readError?.description.contains("credential-vault/v9") == true)
            let storeError = await #expect(throws: VaultError.self) {
                try await vault.storage.storeRefreshToken(token, withNewPassword: "another")
            }
            #expect(storeError?.kind == .unsupportedFormat)
            #expect(try Data(contentsOf: url) == newer, "a record of a newer format was overwritten")

            try Data("{ not json".utf8).write(to: url)
            let corrupt = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(corrupt?.kind == .damagedRecord)
            try await vault.storage.storeRefreshToken(token, withNewPassword: "another")
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "another") == token)
        }
    }

    @Test("user ids are never file names, and empty or huge ones are refused")
    func userIds() async throws {
        try await VaultFixture.with { vault in
            let hostile = RefreshToken(token: "t", userId: "../../etc/passwd")
            try await vault.storage.storeRefreshToken(hostile, withNewPassword: password)
            #expect(try vault.storeFiles().allSatisfy { !$0.contains("passwd") && !$0.contains("..") })
            #expect(try await vault.storage.availableUserIds == ["../../etc/passwd"])
            for userId in ["", String(repeating: "x", count: 2000)] {
                let error = await #expect(throws: VaultError.self) {
                    try await vault.storage.storeRefreshToken(
                        RefreshToken(token: "t", userId: userId),
                        withNewPassword: password
                    )
                }
                #expect(error?.kind == .invalidUserId)
            }
        }
    }
}

/// Forwards to the real key service over HTTP, then answers with another real key's bytes.
struct SwappingKeyService: KeyService {
    let real: HTTPKeyService
    let replacement: SecureBytes
    let keepKeyId: Bool

    func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        try await real.createKey(secret: secret)
    }

    func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        swap(try await real.getKey(keyId: keyId, secret: secret))
    }

    func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        swap(try await real.getKey(keyId: keyId, longSecret: longSecret))
    }

    private func swap(_ key: KeyServiceKey) -> KeyServiceKey {
        KeyServiceKey(keyId: keepKeyId ? key.keyId : UUID().uuidString, key: replacement, longSecret: key.longSecret)
    }
}
