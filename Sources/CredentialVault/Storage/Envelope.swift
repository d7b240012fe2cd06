import Foundation
import VaultCrypto

/// One user's sealed refresh token as it lies on disk (JSON).
///
/// The header (format, user id, key id, KDF parameters, salt) is the associated data of the
/// XChaCha20-Poly1305 box, so editing any of it makes the envelope fail to open.
struct Envelope: Codable, Sendable {
    static let currentFormat = "credential-vault/v1"
    static let kdfAlgorithm = "argon2id13"

    struct KDF: Codable, Sendable {
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
    /// Unix seconds. Part of the associated data, so no byte of an envelope can change unnoticed.
    var createdAt: Int64
    var updatedAt: Int64

    /// A new envelope holding `plaintext` sealed under `dataKey`.
    static func seal(
        _ plaintext: SecureBytes,
        userId: String,
        keyId: String,
        parameters: Argon2idParameters,
        dataKey: SecureBytes,
        now: Date
    ) throws(CryptoError) -> Envelope {
        let header = Envelope(
            format: currentFormat,
            userId: userId,
            keyId: keyId,
            kdf: KDF(
                algorithm: kdfAlgorithm,
                opsLimit: parameters.opsLimit,
                memLimitBytes: parameters.memLimitBytes,
                salt: Base64URL.encode(parameters.salt)
            ),
            nonce: "",
            ciphertext: "",
            createdAt: Int64(now.timeIntervalSince1970),
            updatedAt: Int64(now.timeIntervalSince1970)
        )
        return try header.resealing(plaintext, dataKey: dataKey, now: now)
    }

    /// The same header with `plaintext` sealed anew (a fresh nonce) and `updatedAt` moved to `now`.
    func resealing(_ plaintext: SecureBytes, dataKey: SecureBytes, now: Date) throws(CryptoError) -> Envelope {
        var copy = self
        copy.updatedAt = Int64(now.timeIntervalSince1970)
        let box = try XChaCha20Poly1305.seal(plaintext, key: dataKey, associatedData: copy.associatedData)
        copy.nonce = Base64URL.encode(box.nonce)
        copy.ciphertext = Base64URL.encode(box.ciphertext)
        return copy
    }

    /// The sealed plaintext, if `dataKey` is right and no byte of the envelope changed.
    func open(dataKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        let box = XChaCha20Poly1305.SealedBox(
            nonce: try Base64URL.decode(nonce),
            ciphertext: try Base64URL.decode(ciphertext)
        )
        return try XChaCha20Poly1305.open(box, key: dataKey, associatedData: associatedData)
    }

    /// The KDF parameters; strict decoding, validated before any work is done with them.
    func parameters() throws(CryptoError) -> Argon2idParameters {
        let parameters = Argon2idParameters(
            opsLimit: kdf.opsLimit,
            memLimitBytes: kdf.memLimitBytes,
            salt: try Base64URL.decode(kdf.salt)
        )
        try parameters.validate()
        return parameters
    }

    /// The associated data: every field but the box itself, each length-prefixed, so no two headers
    /// give the same bytes.
    var associatedData: Data {
        var data = Data()
        func field(_ bytes: Data) {
            var length = UInt32(bytes.count).bigEndian
            withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        func number(_ value: UInt64) {
            var big = value.bigEndian
            withUnsafeBytes(of: &big) { data.append(contentsOf: $0) }
        }
        field(Data(format.utf8))
        field(Data(userId.utf8))
        field(Data(keyId.utf8))
        field(Data(kdf.algorithm.utf8))
        number(kdf.opsLimit)
        number(kdf.memLimitBytes)
        field(Data(kdf.salt.utf8))
        number(UInt64(bitPattern: createdAt))
        number(UInt64(bitPattern: updatedAt))
        return data
    }

    // MARK: Encoding

    private struct FormatProbe: Decodable {
        let format: String
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding plain strings, numbers and dates cannot fail.
        return try! encoder.encode(self)
    }

    /// Decodes an envelope read from `path`; a record of another format is reported, never guessed at.
    static func decode(_ data: Data, path: String) throws(VaultError) -> Envelope {
        guard let probe = try? JSONDecoder().decode(FormatProbe.self, from: data) else {
            throw .damagedRecord(path: path, "not an envelope (no format field)")
        }
        guard probe.format == currentFormat else { throw .unsupportedFormat(path: path, format: probe.format) }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
            throw .damagedRecord(path: path, "a field is missing or has the wrong type")
        }
        guard envelope.kdf.algorithm == kdfAlgorithm else {
            throw .unsupportedFormat(path: path, format: "\(currentFormat) with KDF \(envelope.kdf.algorithm)")
        }
        return envelope
    }
}
