import Foundation
import VaultCrypto

/// How a credential becomes what is stored: keyed BLAKE2b under a pepper, bound to the key id, so equal secrets on
/// two keys give unrelated verifiers.
///
/// The hashes go into ordinary arrays: the verifiers are stored anyway, and locking a page for each one cost about
/// a fifth of the server's CPU under load. The pepper itself stays locked (``PepperSet``).
enum VerifierDerivation {
    /// The domains are part of the stored format (they were the mock's first): never change them.
    private enum Domain {
        static let secretVerifier = "keyservice-mock/v1/secret-verifier"
        static let longSecretVerifier = "keyservice-mock/v1/longsecret-verifier"
        static let longSecretPad = "keyservice-mock/v1/longsecret-pad"
    }

    /// The verifier of a secret (`isLongSecret` false) or a long secret for `keyId`.
    static func verifier(
        of credential: String,
        keyId: String,
        isLongSecret: Bool,
        pepper: SecureBytes
    ) throws
        -> [UInt8]
    {
        try hash(
            credential,
            keyId: keyId,
            domain: isLongSecret ? Domain.longSecretVerifier : Domain.secretVerifier,
            pepper: pepper
        )
    }

    /// The pad that seals the long secret: only a caller with the right secret can unseal it, so the database never
    /// holds the long secret in a form that can be read back.
    static func longSecretPad(secret: String, keyId: String, pepper: SecureBytes) throws -> [UInt8] {
        try hash(secret, keyId: keyId, domain: Domain.longSecretPad, pepper: pepper)
    }

    /// The verifiers of a key with `secret` and `longSecret` (the raw 32 bytes) under `pepper` of `version`.
    static func verifiers(
        secret: String,
        longSecret: [UInt8],
        keyId: String,
        pepper: SecureBytes,
        version: Int
    ) throws -> KeyVerifiers {
        var pad = try longSecretPad(secret: secret, keyId: keyId, pepper: pepper)
        defer { zero(&pad) }
        return KeyVerifiers(
            secretVerifier: try verifier(of: secret, keyId: keyId, isLongSecret: false, pepper: pepper),
            longSecretVerifier: try verifier(
                of: Base64URL.encode(Data(longSecret)),
                keyId: keyId,
                isLongSecret: true,
                pepper: pepper
            ),
            sealedLongSecret: xor(longSecret, pad),
            pepperVersion: version
        )
    }

    static func xor(_ lhs: [UInt8], _ rhs: [UInt8]) -> [UInt8] {
        zip(lhs, rhs).map { $0 ^ $1 }
    }

    static func zero(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }

    private static func hash(
        _ credential: String,
        keyId: String,
        domain: String,
        pepper: SecureBytes
    ) throws
        -> [UInt8]
    {
        // keyid, a NUL, the credential: the message, zeroed once hashed.
        var message = [UInt8]()
        message.reserveCapacity(keyId.utf8.count + 1 + credential.utf8.count)
        message.append(contentsOf: keyId.utf8)
        message.append(0)
        message.append(contentsOf: credential.utf8)
        defer { zero(&message) }
        return try BLAKE2b.keyedHashBytes(key: pepper, domain: domain, message: message)
    }
}
