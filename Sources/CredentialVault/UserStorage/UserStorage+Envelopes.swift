import Foundation
import Logging
import VaultCrypto

/// Reading envelopes, deriving keys and counting wrong passwords: the steps the public calls share.
extension UserStorage {
    /// A record this version cannot read is reported, never overwritten; a damaged one may be replaced.
    func refuseUnreadableFormat(_ name: String) throws(VaultError) {
        guard let existing = try store.read(name) else { return }
        do {
            _ = try Envelope.decode(existing, path: name)
        } catch {
            if error.kind == .unsupportedFormat { throw error }
        }
    }

    func open(
        _ envelope: Envelope,
        key: KeyServiceKey,
        wrapKey: SecureBytes,
        longSecret: SecureBytes?
    ) throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        guard key.keyId == envelope.keyId else { throw .wrongKey }
        let dataKey = try dataKey(wrapKey: wrapKey, serverKey: key.key)
        let plaintext: SecureBytes
        do {
            plaintext = try envelope.open(dataKey: dataKey)
        } catch {
            throw .envelopeDidNotOpen
        }
        guard let token = plaintext.utf8String(), !token.isEmpty else {
            throw .unexpectedRecord("the sealed refresh token is not text")
        }
        let unlocked = UnlockedEnvelope(
            userId: envelope.userId,
            keyId: envelope.keyId,
            dataKey: dataKey,
            wrapKey: wrapKey,
            longSecret: longSecret
        )
        return (RefreshToken(token: token, userId: envelope.userId), unlocked)
    }

    func dataKey(wrapKey: SecureBytes, serverKey: SecureBytes) throws(VaultError) -> SecureBytes {
        do {
            return try BLAKE2b.keyedHash(key: wrapKey, domain: Self.dataKeyDomain, message: serverKey)
        } catch {
            throw .wrongKey
        }
    }

    func requireEnvelope(userId: String) throws(VaultError) -> Envelope {
        guard let envelope = try readEnvelope(userId: userId) else { throw .notRegistered(userId: userId) }
        return envelope
    }

    func readEnvelope(userId: String) throws(VaultError) -> Envelope? {
        try Self.validate(userId: userId)
        let envelope = try store.withLock { () throws(VaultError) -> Envelope? in
            let name = StoreFile.envelope.name(userId: userId)
            return try store.read(name).map { data throws(VaultError) in try Envelope.decode(data, path: name) }
        }
        // A file renamed from another user's name opens nothing: its header names the other user.
        if let envelope, envelope.userId != userId {
            throw .unexpectedRecord("the envelope stored for this user belongs to another user")
        }
        return envelope
    }

    static func validate(userId: String) throws(VaultError) {
        guard !userId.isEmpty, userId.utf8.count <= 1024 else { throw .invalidUserId }
    }

    /// Argon2id's 64 bytes: the first half is sent (as the key-service secret), the second never leaves.
    func deriveSecrets(
        _ password: String,
        _ parameters: Argon2idParameters
    ) async throws(VaultError) -> (authSecret: SecureBytes, wrapKey: SecureBytes) {
        do {
            let derived = try await Argon2id.deriveKey(password: password, parameters: parameters, outputLength: 64)
            return (derived.slice(0..<32), derived.slice(32..<64))
        } catch {
            throw .cryptoFailed("Argon2id failed: \(error.reason)")
        }
    }

    /// Runs a `key` call and keeps the count of wrong secrets in a row: a success resets it, a 401 raises
    /// it, and the 401 that reaches ``attemptsBeforeLock`` is reported as the lock it caused.
    func countingAttempts(
        userId: String,
        _ call: () async throws(VaultError) -> KeyServiceKey
    ) async throws(VaultError) -> KeyServiceKey {
        let name = StoreFile.attempts.name(userId: userId)
        let result: Result<KeyServiceKey, VaultError>
        do { result = .success(try await keyServiceCall(call)) } catch { result = .failure(error) }
        switch result {
        case .success(let key):
            if store.exists(name) {
                try store.withLock { () throws(VaultError) in try store.remove(name) }
            }
            return key
        case .failure(let error) where error.isWrongPassword:
            let count = try store.withLock { () throws(VaultError) -> Int in
                let previous = try store.read(name).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                try store.write(Data(String(previous + 1).utf8), to: name)
                return previous + 1
            }
            logger.debug("the key service refused the secret", metadata: ["wrongInARow": "\(count)"])
            throw count >= Self.attemptsBeforeLock ? .keyLocked(host: error.host) : error
        case .failure(let error):
            throw error
        }
    }

    /// Runs a key-service call; whatever it throws is the key service's error.
    func keyServiceCall<T>(_ body: () async throws(VaultError) -> T) async throws(VaultError) -> T {
        do { return try await body() } catch { throw error.attributed(to: .keyService) }
    }
}
