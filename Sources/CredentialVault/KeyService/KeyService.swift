public import VaultCrypto

/// The TIM KeyService v1 calls. The `secret` sent is never the password: ``UserStorage`` derives
/// it with Argon2id, so the key service learns nothing it could use to guess the password offline.
///
/// Errors are ``VaultError``s; an implementation throws the kinds the questions ask about
/// (`.wrongPassword`, `.keyLocked`, `.unreachable`, ...), as ``HTTPKeyService`` does.
public protocol KeyService: Sendable {
    /// `createkey` with `{"secret"}`: a new key, locked to `secret`.
    func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey
    /// `key` with `{"keyid","secret"}`: the key, if `secret` is right. Three wrong secrets in a row lock it.
    func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey
    /// `key` with `{"keyid","longsecret"}`: the key via the device secret. A wrong one counts as a wrong attempt.
    func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey
}
