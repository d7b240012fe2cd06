import Foundation
import VaultCrypto

/// Protocol 2's derived values on the server: the pads that seal a key's OPRF key, auth key and long secret under
/// a pepper. (The proof a `confirm` carries is VaultCrypto's ``KeyServiceProof``, the rule the client shares.)
///
/// A pad is keyed BLAKE2b under the pepper over the key id: only the database AND the pepper together give back
/// what it seals. Nothing secret is stored raw but the data key (as in protocol 1).
enum ProtocolV2Derivation {
    /// What a pad seals; each its own domain, part of the stored format: never change them.
    enum Sealed {
        case oprfKey
        case authKey
        case longSecret

        fileprivate var domain: String {
            switch self {
            case .oprfKey: "keyservice/v2/oprf-key-pad"
            case .authKey: "keyservice/v2/auth-key-pad"
            case .longSecret: "keyservice/v2/longsecret-pad"
            }
        }
    }

    /// The length of a nonce, an auth key, an OPRF key and a long secret.
    static let valueLength = KeyServiceProof.length

    /// `value` XOR the pad of `sealed` for `keyId` under `pepper`: seals a raw value, and unseals a sealed one.
    /// Zero the result when it is a raw secret.
    static func seal(_ value: [UInt8], as sealed: Sealed, keyId: String, pepper: SecureBytes) throws -> [UInt8] {
        var pad = try BLAKE2b.keyedHashBytes(key: pepper, domain: sealed.domain, message: Array(keyId.utf8))
        defer { VerifierDerivation.zero(&pad) }
        guard value.count == pad.count else { throw KeyServiceError("a sealed value is not \(pad.count) bytes") }
        return VerifierDerivation.xor(value, pad)
    }

    /// The proof that the client opened its envelope for the evaluation that answered `nonce`, made with the
    /// key's auth key (``KeyServiceProof``).
    static func proof(authKey: [UInt8], keyId: String, nonce: [UInt8]) throws -> Data {
        try KeyServiceProof.proof(authKey: SecureBytes(authKey), keyId: keyId, nonce: Data(nonce))
    }

    /// A protocol 2 key's verifiers under `pepper` of `version`: the long secret's verifier as protocol 1 keeps it,
    /// no secret verifier (a protocol 2 key has no secret), and the long secret, the OPRF key and the auth key
    /// (nil before the key is enrolled) sealed.
    static func verifiers(
        oprfKey: [UInt8],
        authKey: [UInt8]?,
        longSecret: [UInt8],
        keyId: String,
        pepper: SecureBytes,
        version: Int
    ) throws -> KeyVerifiers {
        KeyVerifiers(
            secretVerifier: [],
            longSecretVerifier: try VerifierDerivation.verifier(
                of: Base64URL.encode(Data(longSecret)),
                keyId: keyId,
                isLongSecret: true,
                pepper: pepper
            ),
            sealedLongSecret: try seal(longSecret, as: .longSecret, keyId: keyId, pepper: pepper),
            pepperVersion: version,
            sealedOPRFKey: try seal(oprfKey, as: .oprfKey, keyId: keyId, pepper: pepper),
            sealedAuthKey: try authKey.map { try seal($0, as: .authKey, keyId: keyId, pepper: pepper) }
        )
    }
}
