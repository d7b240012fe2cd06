import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

@testable import VaultCrypto

/// Key-service protocol v2 (OPRF) from the client's side, against KeyServiceMock over https: logins, the lockout,
/// the move from v1, device unlock, a downgrade, and what the key service receives.
@Suite("Key-service protocol v2 over KeyServiceMock (https)")
struct KeyServiceV2Tests {
    let token = RefreshToken(token: "refresh-token-\(UUID().uuidString)", userId: "dana@example.com")
    let password = "correct horse v2"

    @Test("a v2 login opens with its password; the envelope names v2; a storage configured for v1 opens it too")
    func storeThenGet() async throws {
        try await VaultFixture.with(keyServiceVersion: .v2) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
            let header = try Self.header(vault)
            #expect(header["keyServiceProtocol"] as? Int == 2)
            // An envelope opens with the protocol it names, whatever the storage makes new keys with.
            let v1 = UserStorage(
                keyService: vault.keyService,
                directory: vault.directory,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            #expect(try await v1.getStoredRefreshToken(userId: token.userId, password: password) == token)
            #expect(await vault.server.failedAttempts(keyId: try Self.keyId(vault)) == 0)
        }
    }

    @Test("two wrong passwords are wrong, the third locks the key at the key service, the right one is refused after")
    func lockout() async throws {
        try await VaultFixture.with(keyServiceVersion: .v2) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let keyId = try Self.keyId(vault)
            for attempt in 1...2 {
                let error = await #expect(throws: VaultError.self) {
                    try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong \(attempt)")
                }
                #expect(error?.isWrongPassword == true)
                #expect(error?.isKeyServiceError == true)
                #expect(await vault.server.failedAttempts(keyId: keyId) == attempt)
            }
            let third = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: "wrong 3")
            }
            #expect(third?.isKeyLocked == true)
            let right = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(right?.isKeyLocked == true)
            #expect(right?.isWrongPassword == false)
            #expect(await vault.server.failedAttempts(keyId: keyId) == 3)
        }
    }

    @Test("a right password takes the key service's count back to zero")
    func rightPasswordResets() async throws {
        try await VaultFixture.with(keyServiceVersion: .v2) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let keyId = try Self.keyId(vault)
            for _ in 0..<3 {
                await vault.wrongPasswords(2, userId: token.userId)
                #expect(await vault.server.failedAttempts(keyId: keyId) == 2)
                #expect(
                    try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token
                )
                #expect(await vault.server.failedAttempts(keyId: keyId) == 0)
            }
        }
    }

    @Test("a v1 login moves to v2 at its next new password")
    func movesToVersion2() async throws {
        try await VaultFixture.with(keyServiceVersion: .v1) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            #expect(try Self.header(vault)["keyServiceProtocol"] == nil)
            let oldKeyId = try Self.keyId(vault)
            let v2 = UserStorage(
                keyService: vault.keyService,
                directory: vault.directory,
                keyServiceVersion: .v2,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            // Opening a v1 login with a v2 storage keeps it v1.
            #expect(try await v2.getStoredRefreshToken(userId: token.userId, password: password) == token)
            #expect(try Self.header(vault)["keyServiceProtocol"] == nil)
            try await v2.changePassword(userId: token.userId, from: password, to: "a new password")
            #expect(try Self.header(vault)["keyServiceProtocol"] as? Int == 2)
            #expect(try Self.keyId(vault) != oldKeyId)
            #expect(try await v2.getStoredRefreshToken(userId: token.userId, password: "a new password") == token)
            let old = await #expect(throws: VaultError.self) {
                try await v2.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(old?.isWrongPassword == true)
        }
    }

    @Test("device unlock opens a v2 login without the password")
    func deviceUnlock() async throws {
        try await VaultFixture.with(keyServiceVersion: .v2) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            try await vault.storage.enableDeviceUnlock(userId: token.userId, password: password)
            #expect(try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId) == token)
            #expect(await vault.server.failedAttempts(keyId: try Self.keyId(vault)) == 0)
        }
    }

    @Test("an envelope edited to ask for a v1 login of its v2 key is refused, counting nothing")
    func downgradeRefused() async throws {
        try await VaultFixture.with(keyServiceVersion: .v2) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let url = try vault.envelopeURL()
            let original = try Data(contentsOf: url)
            let keyId = try Self.keyId(vault)

            var header = try Self.header(vault)
            header.removeValue(forKey: "keyServiceProtocol")
            try JSONSerialization.data(withJSONObject: header).write(to: url)
            let downgraded = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(downgraded?.kind == .envelopeDidNotOpen)
            #expect(downgraded?.isWrongPassword == false)
            #expect(downgraded?.reason.contains("protocol v2") == true)
            #expect(await vault.server.failedAttempts(keyId: keyId) == 0)

            // A protocol no version writes is refused before anything is sent.
            header["keyServiceProtocol"] = 3
            try JSONSerialization.data(withJSONObject: header).write(to: url)
            let unknown = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(unknown?.kind == .unsupportedFormat)

            try original.write(to: url)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
        }
    }

    @Test("a v1 envelope edited to claim v2 opens nothing, counting nothing")
    func upgradeClaimRefused() async throws {
        try await VaultFixture.with(keyServiceVersion: .v1) { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let url = try vault.envelopeURL()
            let original = try Data(contentsOf: url)
            var header = try Self.header(vault)
            header["keyServiceProtocol"] = 2
            try JSONSerialization.data(withJSONObject: header).write(to: url)
            let error = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(error?.isWrongPassword == false)
            #expect(error?.isKeyLocked == false)
            #expect(await vault.server.failedAttempts(keyId: try Self.keyId(vault)) == 0)
            try original.write(to: url)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
        }
    }

    /// Everything the client sends the key service (every request body), against every value the right password and
    /// the envelope's salt let an attacker compute: Argon2id's output and halves, and the OPRF input's unblinded
    /// group element, raw and in base64, base64url and hex. In v1 the secret is among them (the control: the check
    /// finds a value that confirms a guess when there is one); in v2 nothing is.
    @Test(
        "what the key service receives confirms the right password in v1, and nothing in v2",
        arguments: [KeyServiceVersion.v1, .v2]
    )
    func recordsConfirmNothing(version: KeyServiceVersion) async throws {
        try await VaultFixture.with(keyServiceVersion: version) { vault in
            let recorder = RecordingTransport(base: TestTLS.transport())
            let keyService = try HTTPKeyService(
                baseURL: vault.server.keyServiceURL,
                transport: recorder,
                timeout: VaultFixture.requestTimeout
            )
            let storage = UserStorage(
                keyService: keyService,
                directory: vault.directory,
                keyServiceVersion: version,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            try await storage.storeRefreshToken(token, withNewPassword: password)
            _ = try await storage.getStoredRefreshToken(userId: token.userId, password: password)
            _ = try? await storage.getStoredRefreshToken(userId: token.userId, password: "a wrong guess")
            try await storage.enableDeviceUnlock(userId: token.userId, password: password)
            _ = try await storage.getStoredRefreshTokenViaDeviceUnlock(userId: token.userId)
            let bodies = recorder.bodies
            #expect(bodies.count >= 5)

            let header = try Self.header(vault)
            let kdf = try #require(header["kdf"] as? [String: Any])
            let parameters = Argon2idParameters(
                opsLimit: try #require(kdf["opsLimit"] as? UInt64),
                memLimitBytes: try #require(kdf["memLimitBytes"] as? UInt64),
                salt: try Base64URL.decode(try #require(kdf["salt"] as? String))
            )
            let derived = try await Argon2id.deriveKey(password: password, parameters: parameters, outputLength: 64)
            let input = derived.slice(0..<32)
            let element = try input.withUnsafeBytes { try OPRF.hashToGroup($0) }
            let values = [derived, input, derived.slice(32..<64), element].map { $0.copyToData() }
            let encodings = values.flatMap { value in
                [
                    value, Data(value.base64EncodedString().utf8), Data(Base64URL.encode(value).utf8),
                    Data(Hex.encode(value).utf8),
                ]
            }
            let found = bodies.filter { body in encodings.contains { body.range(of: $0) != nil } }
            if version == .v1 {
                #expect(!found.isEmpty, "v1 sends the secret: the check must find it")
            } else {
                #expect(found.isEmpty, "a v2 request body holds a value the right password confirms")
            }
        }
    }

    static func header(_ vault: VaultFixture) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: vault.envelopeURL())) as? [String: Any])
    }

    static func keyId(_ vault: VaultFixture) throws -> String {
        try #require(try header(vault)["keyId"] as? String)
    }
}
