public import Foundation

/// Key-service protocol v2's proof that a login opened its envelope: the one rule the client that makes it and the
/// key service that checks it share.
///
/// The auth key comes from the OPRF output (so only the right password makes it), bound to the key id; the proof is
/// a MAC of the key service's nonce under it. The key service keeps the auth key (sealed under its pepper) from
/// enrolment, and a proof resets the count of attempts once: the nonce changes with every reset.
public enum KeyServiceProof {
    /// The length of an auth key and of a proof: 32 bytes.
    public static let length = 32

    /// The auth key of `keyId` from the 64-byte OPRF output.
    public static func authKey(oprfOutput: SecureBytes, keyId: String) throws(CryptoError) -> SecureBytes {
        try BLAKE2b.keyedHash(
            key: oprfOutput,
            domain: "credential-vault/keyservice-v2/auth-key",
            message: Data(keyId.utf8)
        )
    }

    /// The proof for `nonce`: keyed BLAKE2b-256 under `authKey` of the key id, a NUL and the nonce.
    public static func proof(authKey: SecureBytes, keyId: String, nonce: Data) throws(CryptoError) -> Data {
        try BLAKE2b.keyedHash(
            key: authKey,
            domain: "credential-vault/keyservice-v2/confirm",
            message: Data(keyId.utf8) + [0] + nonce
        ).copyToData()
    }
}
