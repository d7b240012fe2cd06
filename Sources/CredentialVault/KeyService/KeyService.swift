public import Foundation
public import VaultCrypto

/// The key-service calls: TIM KeyService v1 and protocol v2 (OPRF). The `secret` sent in v1 is never the password:
/// ``UserStorage`` derives it with Argon2id, so the key service learns nothing it could use to guess the password
/// offline; in v2 nothing derived from the password is sent at all, only an OPRF-blinded element.
///
/// Errors are ``VaultError``s; an implementation throws the kinds the questions ask about
/// (`.wrongPassword`, `.keyLocked`, `.unreachable`, ...), as ``HTTPKeyService`` does. The v2 calls have default
/// implementations that refuse (an implementation written for v1 alone keeps compiling and serves v1).
public protocol KeyService: Sendable {
    /// `createkey` with `{"secret"}`: a new key, locked to `secret`.
    func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey
    /// `key` with `{"keyid","secret"}`: the key, if `secret` is right. Three wrong secrets in a row lock it.
    func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey
    /// `key` with `{"keyid","longsecret"}`: the key via the device secret. A wrong one counts as a wrong attempt.
    /// The same call serves a v2 key.
    func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey

    /// v2 `createkey` with `{"blinded"}`: a new key with its own OPRF key, and the evaluation of `blindedElement`.
    func createKey(blindedElement: Data) async throws(VaultError) -> KeyServiceCreation
    /// v2 `enroll` with `{"keyid","longsecret","authkey"}`: the auth key that checks proofs of opened envelopes, set
    /// once, by the holder of the new key's long secret.
    func enroll(keyId: String, longSecret: SecureBytes, authKey: SecureBytes) async throws(VaultError)
    /// v2 `evaluate` with `{"keyid","blinded"}`: counts one attempt (three in a row lock the key), then evaluates.
    func evaluate(keyId: String, blindedElement: Data) async throws(VaultError) -> KeyServiceEvaluation
    /// v2 `confirm` with `{"keyid","nonce","proof"}`: proves the envelope opened, which takes the count back to zero;
    /// answers the key and its long secret.
    func confirm(keyId: String, nonce: Data, proof: Data) async throws(VaultError) -> KeyServiceKey
}

extension KeyService {
    /// Refuses (`.keyServiceVersionUnsupported(.v2)`): an implementation written for v1 alone serves no v2 key.
    public func createKey(blindedElement: Data) async throws(VaultError) -> KeyServiceCreation {
        throw .keyServiceVersionUnsupported(.v2)
    }

    /// Refuses (`.keyServiceVersionUnsupported(.v2)`): an implementation written for v1 alone serves no v2 key.
    public func enroll(keyId: String, longSecret: SecureBytes, authKey: SecureBytes) async throws(VaultError) {
        throw .keyServiceVersionUnsupported(.v2)
    }

    /// Refuses (`.keyServiceVersionUnsupported(.v2)`): an implementation written for v1 alone serves no v2 key.
    public func evaluate(keyId: String, blindedElement: Data) async throws(VaultError) -> KeyServiceEvaluation {
        throw .keyServiceVersionUnsupported(.v2)
    }

    /// Refuses (`.keyServiceVersionUnsupported(.v2)`): an implementation written for v1 alone serves no v2 key.
    public func confirm(keyId: String, nonce: Data, proof: Data) async throws(VaultError) -> KeyServiceKey {
        throw .keyServiceVersionUnsupported(.v2)
    }
}
