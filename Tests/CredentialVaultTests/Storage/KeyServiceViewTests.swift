import Foundation
import KeyServiceMock
import Synchronization
import Testing
import VaultCrypto

@testable import CredentialVault

/// What the key service (and whoever holds its database or watches its traffic) learns: the first half of
/// Argon2id(password, salt) and nothing else. The password goes nowhere; the salt, the envelope and the wrap key never
/// leave the device. So an attacker with the key-service database and the envelope still pays one Argon2id per
/// guess: checking a guess means deriving it with the envelope's own parameters.
@Suite("the key service sees only an Argon2id output, never the password")
struct KeyServiceViewTests {
    /// Every request body the key service got.
    final class RecordingTransport: HTTPTransport {
        private let inner = TestTLS.transport()
        private let bodies = Mutex<[Data]>([])

        func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
            bodies.withLock { $0.append(request.body ?? Data()) }
            return try await inner.send(request)
        }

        var sent: [Data] { bodies.withLock { $0 } }
    }

    @Test("create, unlock and change password: every secret sent is Argon2id's first half for the envelope's salt")
    func onlyDerivedSecretsLeave() async throws {
        try await VaultFixture.with { fixture in
            let recording = RecordingTransport()
            let storage = UserStorage(
                keyService: try HTTPKeyService(baseURL: fixture.server.keyServiceURL, transport: recording),
                directory: fixture.directory,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            let first = "first password ÆØÅ 7"
            let second = "second password 8"
            try await storage.storeRefreshToken(RefreshToken(token: "rt-1", userId: "ann"), withNewPassword: first)
            let firstEnvelope = try Data(
                contentsOf: fixture.directory.appending(path: StoreFile.envelope.name(userId: "ann"))
            )
            _ = try await storage.getStoredRefreshToken(userId: "ann", password: first)
            try await storage.changePassword(userId: "ann", from: first, to: second)
            let secondEnvelope = try Data(
                contentsOf: fixture.directory.appending(path: StoreFile.envelope.name(userId: "ann"))
            )

            let sent = recording.sent
            #expect(sent.count == 4, "createkey, key, key (old password), createkey (new password)")
            let firstDerived = try await EnvelopeVersion2Tests.derived(first, envelope: firstEnvelope)
            let secondDerived = try await EnvelopeVersion2Tests.derived(second, envelope: secondEnvelope)
            let secrets = try sent.map { body in
                let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: String])
                return try #require(json["secret"])
            }
            #expect(
                secrets == [
                    firstDerived.authSecret.base64URLEncodedString(), firstDerived.authSecret.base64URLEncodedString(),
                    firstDerived.authSecret.base64URLEncodedString(), secondDerived.authSecret.base64URLEncodedString(),
                ]
            )
            // Neither password, nor the wrap key, nor the salt, in any spelling, in any body.
            var forbidden = [Data(first.utf8), Data(second.utf8)]
            forbidden += EnvelopeVersion2Tests.spellings(of: firstDerived.wrapKey)
            forbidden += EnvelopeVersion2Tests.spellings(of: secondDerived.wrapKey)
            for envelope in [firstEnvelope, secondEnvelope] {
                let json = try #require(try JSONSerialization.jsonObject(with: envelope) as? [String: Any])
                let salt = try #require((json["kdf"] as? [String: Any])?["salt"] as? String)
                forbidden.append(Data(salt.utf8))
            }
            for body in sent {
                for secret in forbidden { #expect(body.range(of: secret) == nil) }
            }
        }
    }
}
