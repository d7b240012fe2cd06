import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@testable import CredentialVault

/// Envelope version 2 keeps no byte derived from the password: a stolen copy of the store, device unlock on,
/// confirms no password guess without the key service.
@Suite("no password-derived byte on disk (envelope version 2)")
struct EnvelopeVersion2Tests {
    /// Argon2id of `password` with the parameters and salt of `envelope` (its JSON as stored): the first half
    /// is what the key service checks, the second the wrap key.
    static func derived(
        _ password: String,
        envelope: Data
    ) async throws -> (authSecret: SecureBytes, wrapKey: SecureBytes) {
        let json = try #require(try JSONSerialization.jsonObject(with: envelope) as? [String: Any])
        let kdf = try #require(json["kdf"] as? [String: Any])
        let parameters = Argon2idParameters(
            opsLimit: UInt64(try #require(kdf["opsLimit"] as? Int)),
            memLimitBytes: UInt64(try #require(kdf["memLimitBytes"] as? Int)),
            salt: try Base64URL.decode(try #require(kdf["salt"] as? String))
        )
        let bytes = try await Argon2id.deriveKey(password: password, parameters: parameters, outputLength: 64)
        return (bytes.slice(0..<32), bytes.slice(32..<64))
    }

    /// Every spelling a file could keep `secret` in: raw, base64 (padded, unpadded, with JSON's escaped
    /// slashes), base64url, hex.
    static func spellings(of secret: SecureBytes) -> [Data] {
        let raw = secret.copyToData()
        let base64 = secret.base64EncodedString()
        let unpadded = String(base64.prefix { $0 != "=" })
        let texts = [
            base64, unpadded, unpadded.replacingOccurrences(of: "/", with: "\\/"), secret.base64URLEncodedString(),
            Hex.encode(raw), Hex.encode(raw).uppercased(),
        ]
        return [raw] + texts.map { Data($0.utf8) }
    }

    /// The names of the files in `directory` that hold `secret` in any spelling.
    static func files(in directory: URL, holding secret: SecureBytes) throws -> [String] {
        let spellings = spellings(of: secret)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().filter { name in
            let contents = try Data(contentsOf: directory.appending(path: name))
            return spellings.contains { contents.range(of: $0) != nil }
        }
    }

    /// The JSON object stored in `directory` under `kind`'s name for `userId`.
    static func record(_ kind: StoreFile, userId: String, in directory: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appending(path: kind.name(userId: userId)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
        "after a password login, device unlock on, a device login and a rotation, no file holds either half of Argon2id"
    )
    func nothingDerivedOnDisk() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let store = try #require(fixture.configuration.storeDirectory)
            let vault = try fixture.restarted()
            _ = try await vault.auth.loginWithPassword(password: AuthFixture.password)
            try await vault.auth.enableDeviceUnlock()
            let device = try fixture.restarted()
            _ = try await device.auth.loginWithDeviceUnlock()
            _ = try await device.auth.getAccessToken(forceRefresh: true)

            let envelope = try Data(contentsOf: store.appending(path: StoreFile.envelope.name(userId: userId)))
            let (authSecret, wrapKey) = try await Self.derived(AuthFixture.password, envelope: envelope)
            #expect(try Self.files(in: store, holding: wrapKey) == [], "the wrap key is on disk")
            #expect(try Self.files(in: store, holding: authSecret) == [], "the key service's secret is on disk")

            let deviceRecord = try Self.record(.device, userId: userId, in: store)
            #expect(deviceRecord["format"] as? String == "credential-vault/device/v2")
            #expect((deviceRecord["deviceKey"] as? String)?.isEmpty == false)
            #expect(deviceRecord["wrapKey"] == nil)
            let envelopeRecord = try Self.record(.envelope, userId: userId, in: store)
            #expect(envelopeRecord["format"] as? String == "credential-vault/v2")
            #expect(envelopeRecord["wrapKey"] == nil)
        }
    }

    @Test("after a change of password with device unlock on, neither password's Argon2id output is on disk")
    func nothingDerivedAfterPasswordChange() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let store = try #require(fixture.configuration.storeDirectory)
            try await fixture.vault.auth.enableDeviceUnlock()
            let oldEnvelope = try Data(contentsOf: store.appending(path: StoreFile.envelope.name(userId: userId)))
            try await fixture.vault.userStorage.changePassword(
                userId: userId,
                from: AuthFixture.password,
                to: "the second password"
            )
            #expect(await fixture.vault.userStorage.hasDeviceUnlock(userId: userId))
            _ = try await fixture.restarted().auth.loginWithDeviceUnlock()

            let newEnvelope = try Data(contentsOf: store.appending(path: StoreFile.envelope.name(userId: userId)))
            let old = try await Self.derived(AuthFixture.password, envelope: oldEnvelope)
            let new = try await Self.derived("the second password", envelope: newEnvelope)
            for secret in [old.authSecret, old.wrapKey, new.authSecret, new.wrapKey] {
                #expect(try Self.files(in: store, holding: secret) == [])
            }
            #expect(try Self.record(.device, userId: userId, in: store)["wrapKey"] == nil)
        }
    }

    @Test("a copy of the store, the key service stopped, confirms no guess: every box needs the key service's key")
    func copyConfirmsNoGuess() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let store = try #require(fixture.configuration.storeDirectory)
            let vault = try fixture.restarted()
            _ = try await vault.auth.loginWithPassword(password: AuthFixture.password)
            try await vault.auth.enableDeviceUnlock()
            let token = try #require(await vault.auth.refreshToken)

            // What a thief takes: the whole store directory, device file included.
            let copy = fixture.root.appending(path: "copy")
            try FileManager.default.copyItem(at: store, to: copy)
            chmod(copy.path, 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: copy.path) {
                chmod(copy.appending(path: name).path, 0o600)
            }
            let data = try Data(contentsOf: copy.appending(path: StoreFile.envelope.name(userId: userId)))
            let envelope = try Envelope.decode(data, path: "copy")
            let device = try JSONDecoder().decode(
                DeviceSecret.self,
                from: Data(contentsOf: copy.appending(path: StoreFile.device.name(userId: userId)))
            )
            let deviceKey = SecureBytes(try Base64URL.decode(try #require(device.deviceKey)))
            let (authSecret, wrapKey) = try await Self.derived(AuthFixture.password, envelope: data)
            // Only the key service hands this out, and only for the right password; fetched before it stops.
            let serverKey = try await HTTPKeyService(
                baseURL: fixture.server.keyServiceURL,
                transport: TestTLS.transport()
            )
            .getKey(keyId: envelope.keyId, secret: authSecret.base64URLEncoded()).key
            await fixture.server.stop()

            // Through the library, the right password and a wrong one end alike.
            let thief = UserStorage(
                keyService: try HTTPKeyService(baseURL: fixture.server.keyServiceURL, transport: TestTLS.transport()),
                directory: copy,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            var kinds: [VaultError.Kind] = []
            for guess in [AuthFixture.password, "a wrong guess"] {
                let error = await #expect(throws: VaultError.self) {
                    try await thief.getStoredRefreshToken(userId: userId, password: guess)
                }
                #expect(error?.isNetworkError == true)
                kinds += error.map { [$0.kind] } ?? []
            }
            #expect(kinds.count == 2 && kinds[0] == kinds[1])

            // By hand: nothing the password alone gives opens the password box or the token.
            let empty = SecureBytes(Data())
            let fromPasswordAlone: [(String, SecureBytes)] = [
                ("the wrap key", wrapKey),
                ("the key service's secret", authSecret),
                ("the password key over no server key", try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: empty)),
                (
                    "version 1's data key over no server key",
                    try EnvelopeKeys.version1DataKey(wrapKey: wrapKey, serverKey: empty)
                ),
            ]
            for (name, key) in fromPasswordAlone {
                #expect(throws: CryptoError.self, "\(name) opened the password box") {
                    try envelope.dataKey(passwordKey: key)
                }
                #expect(throws: CryptoError.self, "\(name) opened the token") { try envelope.open(dataKey: key) }
            }
            // Nor does the device key alone open the device box.
            #expect(throws: CryptoError.self) { try envelope.dataKey(deviceWrapKey: deviceKey) }
            #expect(throws: CryptoError.self) { try envelope.open(dataKey: deviceKey) }

            // With the key service's key, both paths open the same data key, and it opens the token.
            let dataKey = try envelope.dataKey(
                passwordKey: try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: serverKey)
            )
            let viaDevice = try envelope.dataKey(
                deviceWrapKey: try EnvelopeKeys.device(deviceKey: deviceKey, serverKey: serverKey)
            )
            #expect(viaDevice == dataKey)
            #expect(try envelope.openToken(dataKey: dataKey).token == token.token)
        }
    }
}
