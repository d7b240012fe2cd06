import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@testable import CredentialVault

/// A store as version 1 of the library left it, written the way its code wrote it (`Envelope` and
/// `DeviceSecret` before envelope version 2, commit b0ba2b5's parent): the token sealed with a key derived
/// from the wrap key and the key service's key, the whole header as associated data, and device unlock
/// keeping the wrap key itself.
enum Version1Store {
    /// Version 1's envelope, field for field.
    struct EnvelopeRecord: Encodable {
        struct KDF: Encodable {
            var algorithm: String
            var opsLimit: UInt64
            var memLimitBytes: UInt64
            var salt: String
        }

        var format: String
        var userId: String
        var keyId: String
        var kdf: KDF
        var nonce: String
        var ciphertext: String
        var createdAt: Int64
        var updatedAt: Int64

        /// Version 1's associated data: each header field length-prefixed, numbers big-endian, both times last.
        var associatedData: Data {
            var data = Data()
            func field(_ text: String) {
                withUnsafeBytes(of: UInt32(text.utf8.count).bigEndian) { data.append(contentsOf: $0) }
                data.append(contentsOf: text.utf8)
            }
            func number(_ value: UInt64) {
                withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
            }
            field(format)
            field(userId)
            field(keyId)
            field(kdf.algorithm)
            number(kdf.opsLimit)
            number(kdf.memLimitBytes)
            field(kdf.salt)
            number(UInt64(bitPattern: createdAt))
            number(UInt64(bitPattern: updatedAt))
            return data
        }
    }

    /// Version 1's device file, field for field.
    struct DeviceRecord: Encodable {
        var format = "credential-vault/device/v1"
        var userId: String
        var keyId: String
        var longSecret: String
        var wrapKey: String
    }

    /// What was written, for the checks.
    struct Written {
        let envelope: Data
        let associatedData: Data
        let keyId: String
        let salt: String
        let wrapKey: SecureBytes
    }

    /// Creates a key at `keyService` for `password` and writes `token` into `directory` as version 1 did,
    /// with a version 1 device file when `deviceUnlock` is set.
    static func write(
        _ token: RefreshToken,
        password: String,
        keyService: any KeyService,
        directory: URL,
        deviceUnlock: Bool,
        now: Date
    ) async throws -> Written {
        let parameters = try Argon2idParameters.generate(
            opsLimit: VaultFixture.opsLimit,
            memLimitBytes: VaultFixture.memLimitBytes
        )
        let derived = try await Argon2id.deriveKey(password: password, parameters: parameters, outputLength: 64)
        let wrapKey = derived.slice(32..<64)
        let key = try await keyService.createKey(secret: derived.slice(0..<32).base64URLEncoded())
        let seconds = Int64(now.timeIntervalSince1970)
        var record = EnvelopeRecord(
            format: "credential-vault/v1",
            userId: token.userId,
            keyId: key.keyId,
            kdf: .init(
                algorithm: "argon2id13",
                opsLimit: parameters.opsLimit,
                memLimitBytes: parameters.memLimitBytes,
                salt: Base64URL.encode(parameters.salt)
            ),
            nonce: "",
            ciphertext: "",
            createdAt: seconds,
            updatedAt: seconds
        )
        let box = try XChaCha20Poly1305.seal(
            SecureBytes(Data(token.token.utf8)),
            key: try EnvelopeKeys.version1DataKey(wrapKey: wrapKey, serverKey: key.key),
            associatedData: record.associatedData
        )
        record.nonce = Base64URL.encode(box.nonce)
        record.ciphertext = Base64URL.encode(box.ciphertext)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let envelope = try encoder.encode(record)
        let url = directory.appending(path: StoreFile.envelope.name(userId: token.userId))
        try envelope.write(to: url)
        chmod(url.path, 0o600)

        if deviceUnlock {
            let device = DeviceRecord(
                userId: token.userId,
                keyId: key.keyId,
                longSecret: try #require(key.longSecret?.utf8String()),
                wrapKey: wrapKey.base64URLEncodedString()
            )
            try FileDeviceSecretStore(directory: directory)
                .save(SecureBytes(try JSONEncoder().encode(device)), for: token.userId)
        }
        return Written(
            envelope: envelope,
            associatedData: record.associatedData,
            keyId: key.keyId,
            salt: record.kdf.salt,
            wrapKey: wrapKey
        )
    }
}

@Suite("envelope version 1 still opens, and is rewritten as version 2")
struct EnvelopeVersion1UpgradeTests {
    static let password = "a version 1 password"

    /// The fixture's user, registered, with their current refresh token rewritten as a version 1 store.
    static func version1Store(
        _ fixture: AuthFixture,
        deviceUnlock: Bool
    ) async throws -> (userId: String, store: URL, written: Version1Store.Written) {
        let userId = try await fixture.register()
        let store = try #require(fixture.configuration.storeDirectory)
        let token = try #require(await fixture.vault.auth.refreshToken)
        let written = try await Version1Store.write(
            token,
            password: password,
            keyService: try HTTPKeyService(
                baseURL: fixture.configuration.keyServiceURL,
                transport: TestTLS.transport()
            ),
            directory: store,
            deviceUnlock: deviceUnlock,
            now: fixture.clock.now
        )
        // The fixture is version 1's bytes: today's reader takes it as version 1 and agrees on its header.
        let decoded = try Envelope.decode(written.envelope, path: "version 1")
        #expect(decoded.isVersion1)
        #expect(decoded.tokenAssociatedData == written.associatedData)
        return (userId, store, written)
    }

    /// Checks the store after the upgrade: one version 2 envelope with a password box, bound to the fixture's
    /// issuer, client and key service, the same key and salt; no wrap key anywhere.
    static func expectUpgraded(
        _ fixture: AuthFixture,
        userId: String,
        store: URL,
        written: Version1Store.Written
    ) throws -> Envelope {
        let data = try Data(contentsOf: store.appending(path: StoreFile.envelope.name(userId: userId)))
        let envelope = try Envelope.decode(data, path: "upgraded")
        #expect(envelope.format == "credential-vault/v2")
        #expect(envelope.passwordWrap != nil)
        #expect(
            envelope.binding
                == EnvelopeBinding(
                    issuer: fixture.configuration.issuer,
                    clientId: fixture.configuration.clientId,
                    keyServiceURL: fixture.configuration.keyServiceURL
                )
        )
        #expect(envelope.keyId == written.keyId)
        #expect(envelope.kdf.salt == written.salt)
        #expect(try EnvelopeVersion2Tests.files(in: store, holding: written.wrapKey) == [], "the wrap key remains")
        return envelope
    }

    @Test("a password login opens a version 1 envelope and leaves a bound version 2 with a password box")
    func passwordLoginWithoutDeviceUnlock() async throws {
        try await AuthFixture.with { fixture in
            let (userId, store, written) = try await Self.version1Store(fixture, deviceUnlock: false)
            let accessToken = try await fixture.restarted().auth.loginWithPassword(password: Self.password)
            #expect(accessToken.userId == userId)

            let envelope = try Self.expectUpgraded(fixture, userId: userId, store: store, written: written)
            #expect(envelope.deviceWrap == nil)
            #expect(
                !FileManager.default.fileExists(
                    atPath: store.appending(path: StoreFile.device.name(userId: userId)).path
                )
            )
            // The upgraded envelope opens again with the same password, as version 2.
            _ = try await fixture.restarted().auth.loginWithPassword(password: Self.password)
            #expect(
                try Self.expectUpgraded(fixture, userId: userId, store: store, written: written).format
                    == Envelope.currentFormat
            )
        }
    }

    @Test("a password login replaces a version 1 device file (with the wrap key) by a version 2 one without it")
    func passwordLoginReplacesDeviceFile() async throws {
        try await AuthFixture.with { fixture in
            let (userId, store, written) = try await Self.version1Store(fixture, deviceUnlock: true)
            _ = try await fixture.restarted().auth.loginWithPassword(password: Self.password)

            let envelope = try Self.expectUpgraded(fixture, userId: userId, store: store, written: written)
            #expect(envelope.deviceWrap != nil)
            let device = try EnvelopeVersion2Tests.record(.device, userId: userId, in: store)
            #expect(device["format"] as? String == "credential-vault/device/v2")
            #expect(device["wrapKey"] == nil)
            #expect((device["deviceKey"] as? String)?.isEmpty == false)
            // Device unlock keeps working with the new file.
            #expect(try await fixture.restarted().auth.loginWithDeviceUnlock().userId == userId)
        }
    }

    @Test("a device login opens a version 1 envelope with its version 1 device file, and upgrades both")
    func deviceLoginUpgrades() async throws {
        try await AuthFixture.with { fixture in
            let (userId, store, written) = try await Self.version1Store(fixture, deviceUnlock: true)
            let accessToken = try await fixture.restarted().auth.loginWithDeviceUnlock()
            #expect(accessToken.userId == userId)

            let envelope = try Self.expectUpgraded(fixture, userId: userId, store: store, written: written)
            #expect(envelope.deviceWrap != nil)
            let device = try EnvelopeVersion2Tests.record(.device, userId: userId, in: store)
            #expect(device["format"] as? String == "credential-vault/device/v2")
            #expect(device["wrapKey"] == nil)
            // Both ways in work afterwards: the password box was sealed from the wrap key the old file kept.
            #expect(try await fixture.restarted().auth.loginWithPassword(password: Self.password).userId == userId)
            #expect(try await fixture.restarted().auth.loginWithDeviceUnlock().userId == userId)
        }
    }
}
