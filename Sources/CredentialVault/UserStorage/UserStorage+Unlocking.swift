import Foundation
import Logging
import VaultCrypto

/// The seam ``Auth`` uses: unlocking an envelope once, then sealing rotated tokens with what it holds.
extension UserStorage {
    /// Opens the user's envelope with `password`: one Argon2id and one counted key-service attempt.
    func unlock(
        userId: String,
        password: String
    ) async throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        let envelope = try requireEnvelope(userId: userId)
        let parameters: Argon2idParameters
        do {
            parameters = try envelope.parameters()
        } catch {
            throw .unexpectedRecord("the envelope's key-derivation settings are unusable: \(error.reason)")
        }
        let clock = ContinuousClock()
        let started = clock.now
        let (authSecret, wrapKey) = try await deriveSecrets(password, parameters)
        let derived = clock.now
        let key = try await countingAttempts(userId: userId) { () async throws(VaultError) in
            try await keyService.getKey(keyId: envelope.keyId, secret: authSecret.base64URLEncoded())
        }
        var opened = try open(envelope, key: key, wrapKey: wrapKey, longSecret: key.longSecret)
        opened.envelope.timings = (keyDerivation: derived - started, keyService: clock.now - derived)
        logger.debug("the password opened the envelope")
        return opened
    }

    /// Opens the user's envelope with the device secret: no password, one counted key-service attempt.
    func unlockViaDeviceUnlock(
        userId: String
    ) async throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        let envelope = try requireEnvelope(userId: userId)
        guard let blob = try deviceSecrets.load(for: userId) else {
            throw .deviceUnlockFailed("it is not enabled for this user")
        }
        guard let stored = try? JSONDecoder().decode(DeviceSecret.self, from: blob.copyToData()) else {
            throw .deviceUnlockFailed("its stored secret is damaged; enable it again")
        }
        guard stored.format == DeviceSecret.currentFormat, stored.userId == userId, stored.keyId == envelope.keyId,
            let wrapKeyData = try? Base64URL.decode(stored.wrapKey), wrapKeyData.count == 32
        else {
            throw .deviceUnlockFailed("it was set up for an earlier password; enable it again")
        }
        let longSecret = SecureBytes(Data(stored.longSecret.utf8))
        let key: KeyServiceKey
        do {
            key = try await countingAttempts(userId: userId) { () async throws(VaultError) in
                try await keyService.getKey(keyId: envelope.keyId, longSecret: longSecret)
            }
        } catch {
            throw error.isWrongPassword ? .deviceUnlockFailed("the key service refused the device secret") : error
        }
        logger.debug("the device secret opened the envelope")
        return try open(envelope, key: key, wrapKey: SecureBytes(wrapKeyData), longSecret: longSecret)
    }

    /// Seals `refreshToken` under a new password: a new salt, a new key at the key service, a new envelope,
    /// written atomically. Turns device unlock off (it belonged to the old key).
    func sealUnderNewPassword(
        _ refreshToken: RefreshToken,
        password: String
    ) async throws(VaultError) -> UnlockedEnvelope {
        try Self.validate(userId: refreshToken.userId)
        let name = StoreFile.envelope.name(userId: refreshToken.userId)
        // Checked before a key is created at the key service, and again under the lock before writing.
        try store.withLock { () throws(VaultError) in try refuseUnreadableFormat(name) }
        let parameters: Argon2idParameters
        do {
            parameters = try Argon2idParameters.generate(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        } catch {
            throw .invalidConfiguration("the Argon2id cost for new passwords is unusable: \(error.reason)")
        }
        let (authSecret, wrapKey) = try await deriveSecrets(password, parameters)
        let key = try await keyServiceCall { () async throws(VaultError) in
            try await keyService.createKey(secret: authSecret.base64URLEncoded())
        }
        let dataKey = try dataKey(wrapKey: wrapKey, serverKey: key.key)
        let envelope: Envelope
        do {
            envelope = try Envelope.seal(
                SecureBytes(Data(refreshToken.token.utf8)),
                userId: refreshToken.userId,
                keyId: key.keyId,
                parameters: parameters,
                dataKey: dataKey,
                now: now()
            )
        } catch {
            throw .cryptoFailed("sealing the refresh token failed: \(error.reason)")
        }
        try store.withLock { () throws(VaultError) in
            try refuseUnreadableFormat(name)
            try store.write(envelope.encoded(), to: name)
            try store.remove(StoreFile.attempts.name(userId: refreshToken.userId))
        }
        // The old device secret belonged to the old key.
        try deviceSecrets.remove(for: refreshToken.userId)
        logger.debug("sealed a refresh token under a new password and a new key")
        return UnlockedEnvelope(
            userId: refreshToken.userId,
            keyId: key.keyId,
            dataKey: dataKey,
            wrapKey: wrapKey,
            longSecret: key.longSecret
        )
    }

    /// Holds the store's session lock until the returned lock is released (see ``SessionLock``).
    func sessionLock() async throws(VaultError) -> AdvisoryLock {
        try await SessionLock.acquire(in: store)
    }

    /// The refresh token stored now for the envelope's user, opened with its data key (no password, no key
    /// service): another process may have rotated it since this session began.
    func storedRefreshToken(in unlocked: UnlockedEnvelope) throws(VaultError) -> RefreshToken {
        guard let envelope = try readEnvelope(userId: unlocked.userId), envelope.keyId == unlocked.keyId else {
            throw .notRegistered(userId: unlocked.userId)
        }
        guard let token = (try? envelope.open(dataKey: unlocked.dataKey))?.utf8String() else {
            throw .envelopeDidNotOpen
        }
        return RefreshToken(token: token, userId: unlocked.userId)
    }

    /// Seals `refreshToken` with the envelope's data key and writes it atomically, keeping the header.
    /// Refuses when the envelope changed key meanwhile (a new password was set elsewhere).
    func persist(_ refreshToken: RefreshToken, in unlocked: UnlockedEnvelope) throws(VaultError) {
        guard refreshToken.userId == unlocked.userId else {
            throw .unexpectedRecord("the token belongs to another user")
        }
        try store.withLock { () throws(VaultError) in
            let name = StoreFile.envelope.name(userId: unlocked.userId)
            guard let data = try store.read(name) else { throw .damagedRecord(path: name, "it was removed") }
            let envelope = try Envelope.decode(data, path: name)
            guard envelope.keyId == unlocked.keyId, envelope.userId == unlocked.userId else {
                throw .damagedRecord(path: name, "a new password was set meanwhile")
            }
            let updated: Envelope
            do {
                updated = try envelope.resealing(
                    SecureBytes(Data(refreshToken.token.utf8)),
                    dataKey: unlocked.dataKey,
                    now: now()
                )
            } catch {
                throw .cryptoFailed("sealing the refresh token failed")
            }
            try store.write(updated.encoded(), to: name)
        }
        logger.debug("sealed a rotated refresh token")
    }

    /// Keeps the unlocked envelope's long secret and wrap key on this device: no Argon2id, no key service.
    func enableDeviceUnlock(_ unlocked: UnlockedEnvelope) throws(VaultError) {
        guard let longSecret = unlocked.longSecret?.utf8String() else { throw .noLongSecret(host: nil) }
        let record = DeviceSecret(
            format: DeviceSecret.currentFormat,
            userId: unlocked.userId,
            keyId: unlocked.keyId,
            longSecret: longSecret,
            wrapKey: unlocked.wrapKey.base64URLEncodedString()
        )
        // Encoding a struct of strings cannot fail.
        let blob = SecureBytes(try! JSONEncoder().encode(record))
        try deviceSecrets.save(blob, for: unlocked.userId)
        logger.debug("device unlock enabled")
    }
}
