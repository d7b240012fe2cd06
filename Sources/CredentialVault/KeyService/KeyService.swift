import Foundation
import VaultCrypto

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

    public var description: String { "KeyServiceKey(keyId: \(keyId), key: redacted)" }
}

/// The TIM KeyService v1 calls. The `secret` sent is never the password: ``UserStorage`` derives
/// it with Argon2id, so the key service learns nothing it could use to guess the password offline.
public protocol KeyService: Sendable {
    /// `createkey` with `{"secret"}`: a new key, locked to `secret`.
    func createKey(secret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey
    /// `key` with `{"keyid","secret"}`: the key, if `secret` is right. Three wrong secrets in a row lock it.
    func getKey(keyId: String, secret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey
    /// `key` with `{"keyid","longsecret"}`: the key via the device secret. A wrong one counts as a wrong attempt.
    func getKey(keyId: String, longSecret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey
}
