public import VaultCrypto

/// A key from the key service. `key` and `longSecret` are secrets; `description` shows neither.
public struct KeyServiceKey: Sendable, CustomStringConvertible {
    /// The key id (a UUID string in TIM deployments).
    public let keyId: String
    /// The server key: 16 to 64 random bytes.
    public let key: SecureBytes
    /// The long secret that opens the key without the password (device unlock), when the service sent one.
    public let longSecret: SecureBytes?

    /// A key as the key service returned it.
    public init(keyId: String, key: SecureBytes, longSecret: SecureBytes?) {
        self.keyId = keyId
        self.key = key
        self.longSecret = longSecret
    }

    /// The key id alone; the key and the long secret are redacted.
    public var description: String { "KeyServiceKey(keyId: \(keyId), key: redacted)" }
}
