import Foundation
import PropertyBased
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// Envelopes as they lie on disk, under hostile edits: every one decodes or is a ``VaultError``, and every decoded
/// one opens (under the key it was sealed with) or is a `CryptoError`. The seeds are real envelopes sealed by
/// `Envelope.seal`, so a mutation that leaves the JSON readable reaches the key box, the token box and the sealed
/// record inside.
@Suite("hostile input: the envelope reader", .tags(.fuzz), .enabled(inTier: .fuzz))
struct EnvelopeFuzzTests {
    /// The key every seed's password box is sealed under (a fixed test key, not a secret).
    static let passwordKey = SecureBytes(repeatElement(UInt8(7), count: 32))

    /// Real envelopes: with and without a binding, a session context, a device box; then hostile edits of the kinds
    /// a damaged or forged file has.
    static let seeds: [[UInt8]] = {
        let parameters = Argon2idParameters(opsLimit: 2, memLimitBytes: 19 << 20, salt: Data(repeating: 1, count: 16))
        let binding = EnvelopeBinding(
            issuer: URL(string: "https://issuer.example/realms/a")!,
            clientId: "vault",
            keyServiceURL: URL(string: "https://issuer.example/realms/a/keyservice/v1")!
        )
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        var envelopes: [Envelope] = []
        for (binding, context) in [
            (nil, [:]), (binding, [:]),
            (binding, ["scope": JSONValue.string("openid"), "patient": .object(["id": .number(1e300)])]),
        ] as [(EnvelopeBinding?, [String: JSONValue])] {
            let token = RefreshToken(token: "refresh-token-for-fuzzing", userId: "alice", context: context)
            let (envelope, dataKey) = try! Envelope.seal(
                token,
                userId: "alice",
                keyId: "key-1",
                parameters: parameters,
                binding: binding,
                passwordKey: passwordKey,
                now: now
            )
            envelopes.append(envelope)
            envelopes.append(try! envelope.withDeviceWrap(dataKey: dataKey, deviceWrapKey: passwordKey))
        }
        var seeds = envelopes.map { Array($0.encoded()) }
        let text = String(decoding: seeds[1], as: UTF8.self)
        seeds += [
            text.replacingOccurrences(of: "credential-vault/v2", with: "credential-vault/v1"),
            text.replacingOccurrences(of: "credential-vault/v2", with: "credential-vault/v9"),
            text.replacingOccurrences(of: "argon2id13", with: "argon2i13"),
            text.replacingOccurrences(of: "\"opsLimit\" : 2", with: "\"opsLimit\" : 18446744073709551615"),
            text.replacingOccurrences(of: "\"opsLimit\" : 2", with: "\"opsLimit\" : -1"),
            text.replacingOccurrences(of: "\"opsLimit\" : 2", with: "\"opsLimit\" : 1e999"),
            text.replacingOccurrences(
                of: "\"userId\" : \"alice\"",
                with: "\"userId\" : \"alice\", \"userId\" : \"bob\""
            ),
            text.replacingOccurrences(of: "\"createdAt\" : 1700000000", with: "\"createdAt\" : 9223372036854775808"),
            text.replacingOccurrences(of: "\"userId\" : \"alice\"", with: "\"userId\" : \"..\\/..\\/etc\\/passwd\""),
            #"{"format":"credential-vault/v2"}"#, #"{"format":1}"#, "[]", "",
        ].map { Array($0.utf8) }
        return seeds
    }()

    static let json = HostileJSON(
        names: [
            "format", "userId", "keyId", "kdf", "algorithm", "opsLimit", "memLimitBytes", "salt", "binding", "issuer",
            "clientId", "keyService", "passwordWrap", "deviceWrap", "payload", "nonce", "ciphertext", "createdAt",
            "updatedAt",
        ],
        strings: [
            "credential-vault/v2", "credential-vault/v1", "argon2id13", "credential-vault/record/v1",
            "AQEBAQEBAQEBAQEBAQEBAQ", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "",
        ]
    )

    static let envelopes = HostileInputs.bytes(seeds: seeds, json: json, sizeCap: FileStore.maximumFileSize)

    @Test("every hostile envelope is a VaultError, a CryptoError when opened, or opens")
    func reader() async throws {
        let run = HostileInputRun(parser: "envelope", suite: "EnvelopeFuzzTests", settings: try .fromEnvironment())
        let report = await run.run(Self.envelopes, refusal: VaultError.self, describe: HostileBytes.describe) {
            bytes in
            let envelope = try Envelope.decode(Data(bytes), path: "/hostile/envelope.json")
            _ = (envelope.keyAssociatedData, envelope.tokenAssociatedData)
            do throws(CryptoError) {
                _ = try envelope.parameters()
                _ = try? envelope.dataKey(deviceWrapKey: Self.passwordKey)
                if envelope.isVersion1 {
                    _ = try envelope.open(dataKey: Self.passwordKey)
                } else {
                    _ = try envelope.openToken(dataKey: try envelope.dataKey(passwordKey: Self.passwordKey))
                }
                return .accepted
            } catch {
                return .refused
            }
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
