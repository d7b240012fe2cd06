import VaultCrypto

/// The keys that open an envelope's boxes, each keyed BLAKE2b of the key service's key under a local key,
/// with its own domain, so every path needs the key service.
enum EnvelopeKeys {
    /// Version 2: the key of the password box, from the password's wrap key.
    static func password(wrapKey: SecureBytes, serverKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        try BLAKE2b.keyedHash(key: wrapKey, domain: "credential-vault/v2/password-key", message: serverKey)
    }

    /// Version 2 with a key-service protocol v2 key: the key of the password box, from the password's wrap key and
    /// the 64-byte OPRF output (the key service's part, as its key is in v1).
    static func password(wrapKey: SecureBytes, oprfOutput: SecureBytes) throws(CryptoError) -> SecureBytes {
        try BLAKE2b.keyedHash(key: wrapKey, domain: "credential-vault/v2/oprf-password-key", message: oprfOutput)
    }

    /// Version 2: the key of the device box, from the random device key.
    static func device(deviceKey: SecureBytes, serverKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        try BLAKE2b.keyedHash(key: deviceKey, domain: "credential-vault/v2/device-key", message: serverKey)
    }

    /// Version 1: the data key itself, from the password's wrap key.
    static func version1DataKey(wrapKey: SecureBytes, serverKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        try BLAKE2b.keyedHash(key: wrapKey, domain: "credential-vault/v1/data-key", message: serverKey)
    }
}
