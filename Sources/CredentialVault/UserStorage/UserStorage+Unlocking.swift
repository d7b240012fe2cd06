import Foundation
import Logging
import VaultCrypto
import VaultPOSIX

/// The seam ``Auth`` uses: unlocking an envelope once, then sealing rotated tokens with what it holds.
///
/// None of these takes the session lock: each asks for the ``HeldSessionLock`` the caller holds
/// (``withSessionLock(isolation:_:)``: ``Auth`` around a whole login or refresh, the public methods of ``UserStorage``
/// around each call).
extension UserStorage {
    /// Opens the user's envelope with `password`: one Argon2id and one counted key-service attempt. A
    /// version 1 envelope is rewritten as version 2 on the way.
    func unlock(
        userId: String,
        password: String,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        var unused: Result<StoreReservation, VaultError>?
        return try await unlock(
            userId: userId,
            password: password,
            reservingSpace: false,
            reservation: &unused,
            under: held
        )
    }

    /// ``unlock(userId:password:under:)``, of the file `read` already (``soleUser()``) when given. With
    /// `reservingSpace`, the unlock also takes the space of the envelope the login will write
    /// (``reserveEnvelopeSpace()``) and leaves the outcome in `reservation` for ``Auth`` to use before it sends the
    /// refresh. The reservation needs nothing the password gives, so it starts with Argon2id: its file, allocation and
    /// fsync wait on the disk on a thread of their own while Argon2id computes, instead of beside the key-service call,
    /// where they slowed its answer (issue 23: 0.4–0.5 ms on loopback, the key service's own commit sharing the disk).
    /// The record of wrong passwords (``countingAttempts(userId:recorded:_:)``) is read then too.
    func unlock(
        userId: String,
        read: EnvelopeFile? = nil,
        password: String,
        reservingSpace: Bool,
        reservation: inout Result<StoreReservation, VaultError>?,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        guard !password.isEmpty else { throw .invalidPassword("it is empty") }
        let (envelope, bytes) = try requireEnvelopeFile(userId: userId, read: read)
        let parameters: Argon2idParameters
        do {
            parameters = try envelope.parameters()
        } catch {
            throw .unexpectedRecord("the envelope's key-derivation settings are unusable: \(error.reason)")
        }
        let clock = ContinuousClock()
        // Awaited on every way out: a reservation the login does not use (a wrong password) is removed at once.
        async let reserved = reservingSpace ? reservedSpace() : nil
        async let recorded = recordedAttempts(userId: userId)
        let started = clock.now
        let (authSecret, wrapKey) = try await deriveSecrets(password, parameters)
        let derived = clock.now
        var opened: (refreshToken: RefreshToken, envelope: UnlockedEnvelope)
        if envelope.keyServiceVersion == .v2 {
            let (dataKey, key) = try await countingAttempts(userId: userId, recorded: await recorded) {
                () async throws(VaultError) in
                try await openPasswordBox(envelope, input: authSecret, wrapKey: wrapKey)
            }
            let finished = clock.now
            reservation = await reserved
            guard key.keyId == envelope.keyId else { throw VaultError.wrongKey }
            opened = try open(envelope, dataKey: dataKey, key: key)
            opened.envelope.timings = (keyDerivation: derived - started, keyService: finished - derived)
            logger.debug("the password opened the envelope (key-service protocol v2)")
            return opened
        }
        let key = try await countingAttempts(userId: userId, recorded: await recorded) { () async throws(VaultError) in
            try await keyService.getKey(keyId: envelope.keyId, secret: authSecret.base64URLEncoded())
        }
        let finished = clock.now
        reservation = await reserved
        guard key.keyId == envelope.keyId else { throw VaultError.wrongKey }
        if envelope.isVersion1 {
            opened = try upgrade(envelope, wrapKey: wrapKey, key: key, under: held)
        } else {
            let dataKey = try crypto(.envelopeDidNotOpen) { () throws(CryptoError) in
                try envelope.dataKey(passwordKey: try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: key.key))
            }
            opened = try open(envelope, dataKey: dataKey, key: key)
            opened.envelope.openedBytes = bytes
        }
        opened.envelope.timings = (keyDerivation: derived - started, keyService: finished - derived)
        logger.debug("the password opened the envelope")
        return opened
    }

    /// Opens the user's envelope with the device secret: no password, one counted key-service attempt.
    func unlockViaDeviceUnlock(
        userId: String,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        let envelope = try requireEnvelope(userId: userId)
        guard let blob = try deviceSecrets.load(for: userId) else {
            throw .deviceUnlockFailed("it is not enabled for this user")
        }
        guard let stored = try? UntrustedJSON.decode(DeviceSecret.self, from: blob.copyToData()) else {
            throw .deviceUnlockFailed("its stored secret is damaged; enable it again")
        }
        guard stored.userId == userId, stored.keyId == envelope.keyId else {
            throw .deviceUnlockFailed("it was set up for an earlier password; enable it again")
        }
        let longSecret = SecureBytes(Data(stored.longSecret.utf8))
        let key: KeyServiceKey
        do {
            key = try await countingAttempts(userId: userId, recorded: recordedAttempts(userId: userId)) {
                () async throws(VaultError) in
                try await keyService.getKey(keyId: envelope.keyId, longSecret: longSecret)
            }
        } catch {
            throw error.isWrongPassword ? .deviceUnlockFailed("the key service refused the device secret") : error
        }
        guard key.keyId == envelope.keyId else { throw VaultError.wrongKey }
        let refused = VaultError.deviceUnlockFailed("its secret no longer opens the stored login; enable it again")
        let opened: (refreshToken: RefreshToken, envelope: UnlockedEnvelope)
        switch stored.format {
        case DeviceSecret.currentFormat:
            guard let deviceKey = stored.deviceKey.flatMap({ (try? Base64URL.decode($0)).map { SecureBytes($0) } }),
                !envelope.isVersion1
            else { throw refused }
            let dataKey = try crypto(refused) { () throws(CryptoError) in
                try envelope.dataKey(deviceWrapKey: try EnvelopeKeys.device(deviceKey: deviceKey, serverKey: key.key))
            }
            opened = try open(envelope, dataKey: dataKey, key: key)
        case DeviceSecret.version1:
            // The last use of a password-derived byte kept on disk: it opens the envelope once, and device
            // unlock is set up again without it.
            guard let wrapKey = stored.wrapKey.flatMap({ (try? Base64URL.decode($0)).map { SecureBytes($0) } }) else {
                throw refused
            }
            if envelope.isVersion1 {
                opened = try upgrade(envelope, wrapKey: wrapKey, key: key, under: held)
            } else {
                let dataKey = try crypto(refused) { () throws(CryptoError) in
                    try envelope.dataKey(passwordKey: try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: key.key))
                }
                opened = try open(envelope, dataKey: dataKey, key: key)
                try enableDeviceUnlock(opened.envelope, under: held)
            }
        default:
            throw .deviceUnlockFailed("its stored secret has a format this version cannot read; enable it again")
        }
        logger.debug("the device secret opened the envelope")
        return opened
    }

    /// Seals `refreshToken` under a new password: a new salt, a new key at the key service (of this storage's
    /// ``keyServiceVersion``: so a v1 login moves to v2 at its next new password), a new envelope with a new data key,
    /// written atomically. Turns device unlock off (it belonged to the old key).
    func sealUnderNewPassword(
        _ refreshToken: RefreshToken,
        password: String,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> UnlockedEnvelope {
        try Self.validate(userId: refreshToken.userId)
        try checkNewPassword(password)
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
        let key: KeyServiceKey
        let passwordKey: SecureBytes
        switch keyServiceVersion {
        case .v1:
            key = try await keyServiceCall { () async throws(VaultError) in
                try await keyService.createKey(secret: authSecret.base64URLEncoded())
            }
            passwordKey = try crypto(.cryptoFailed("sealing the refresh token failed")) { () throws(CryptoError) in
                try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: key.key)
            }
        case .v2:
            (key, passwordKey) = try await createKeyVersion2(input: authSecret, wrapKey: wrapKey)
        }
        let (envelope, dataKey) = try crypto(.cryptoFailed("sealing the refresh token failed")) {
            () throws(CryptoError) in
            try Envelope.seal(
                refreshToken,
                userId: refreshToken.userId,
                keyId: key.keyId,
                parameters: parameters,
                binding: binding(for: refreshToken),
                keyServiceVersion: keyServiceVersion,
                passwordKey: passwordKey,
                now: now()
            )
        }
        try store.withLock { () throws(VaultError) in
            try refuseUnreadableFormat(name)
            try store.write(envelope.encoded(), to: name)
            // A new key: no wrong password counted yet, known here.
            try store.write(Data("0".utf8), to: StoreFile.attempts.name(userId: refreshToken.userId))
        }
        // The old device secret belonged to the old key.
        try deviceSecrets.remove(for: refreshToken.userId)
        logger.debug("sealed a refresh token under a new password and a new key")
        return UnlockedEnvelope(
            userId: refreshToken.userId,
            keyId: key.keyId,
            dataKey: dataKey,
            serverKey: key.key,
            longSecret: key.longSecret
        )
    }

    /// The envelope on disk now and the refresh token it holds, opened (and so checked, header included)
    /// with the unlocked data key, no password, no key service: another process may have rotated the token
    /// since this session began.
    func storedRefreshToken(
        in unlocked: UnlockedEnvelope,
        under held: borrowing HeldSessionLock
    ) throws(VaultError) -> (refreshToken: RefreshToken, envelope: Envelope) {
        let envelope = try verifiedEnvelope(in: unlocked, under: held)
        guard let token = try? envelope.openToken(dataKey: unlocked.dataKey) else { throw .envelopeDidNotOpen }
        return (token, envelope)
    }

    /// The envelope on disk now, checked to be the one `unlocked` opened (same key id) and unchanged in any
    /// byte its data key authenticates. Read before a refresh, so that after the answer only sealing and
    /// the write remain.
    func verifiedEnvelope(
        in unlocked: UnlockedEnvelope,
        under held: borrowing HeldSessionLock
    ) throws(VaultError) -> Envelope {
        let name = StoreFile.envelope.name(userId: unlocked.userId)
        // Without the store's lock: every writer of an envelope in this library holds the session lock (`held`), and
        // replaces the file by a rename, which a read sees whole or not at all. What this read is for, a change made
        // by anyone else, takes no lock of ours either: it shows in the bytes.
        guard let data = try store.read(name) else { throw .notRegistered(userId: unlocked.userId) }
        let envelope = try decodeEnvelope(data, name: name)
        // The very bytes this data key opened at unlock, with every check below passed then: each is a function of
        // the bytes, the data key, the user and the key id, so they pass again and the box is not opened twice.
        if let opened = unlocked.openedBytes, opened == data { return envelope }
        guard envelope.userId == unlocked.userId, envelope.keyId == unlocked.keyId else {
            throw .damagedRecord(path: name, "a new password was set meanwhile")
        }
        guard !envelope.isLoggedOut else { throw .loggedOut(userId: unlocked.userId) }
        guard (try? envelope.openToken(dataKey: unlocked.dataKey)) != nil else {
            throw .damagedRecord(path: name, "it changed since this session opened it")
        }
        return envelope
    }

    /// Takes the space of the next envelope in the store (``FileStore/reserve()``), before a refresh is sent. The
    /// reservations of killed processes (a megabyte each) go first.
    func reserveEnvelopeSpace() async throws(VaultError) -> StoreReservation {
        try await reservedSpace().get()
    }

    /// ``reserveEnvelopeSpace()``, its failure kept for the moment the reservation is needed. The directory scan,
    /// the allocation and the fsync run on a thread of their own (``BlockingThread``), off the actor and off the
    /// cooperative pool, so a login's other tasks run while the disk works.
    func reservedSpace() async -> Result<StoreReservation, VaultError> {
        let store = store
        return await BlockingThread.run("vault-reserve") {
            Result { () throws(VaultError) in
                try store.withLock { () throws(VaultError) in
                    store.removeStaleTemporaryFiles()
                    return try store.reserve()
                }
            }
        }
    }

    /// Seals `refreshToken` and its context into `envelope` (read by ``verifiedEnvelope(in:under:)`` under the same session lock)
    /// and writes it, through `reservation` when given: no other work between the token's arrival and the fsync.
    func persist(
        _ refreshToken: RefreshToken,
        onto envelope: Envelope,
        in unlocked: UnlockedEnvelope,
        reservation: StoreReservation? = nil,
        under held: borrowing HeldSessionLock
    ) throws(VaultError) {
        guard refreshToken.userId == unlocked.userId else {
            throw .unexpectedRecord("the token belongs to another user")
        }
        let updated = try crypto(.cryptoFailed("sealing the refresh token failed")) { () throws(CryptoError) in
            try envelope.resealing(refreshToken, dataKey: unlocked.dataKey, now: now())
        }
        let name = StoreFile.envelope.name(userId: unlocked.userId)
        let bytes = updated.encoded()
        try store.withLock { () throws(VaultError) in
            if let reservation {
                try store.write(bytes, to: name, into: reservation)
            } else {
                try store.write(bytes, to: name)
            }
        }
        // The next login reads these bytes back (to find the user, to open it): they are `updated`'s encoding, so
        // its decoding is known and not parsed again.
        lastDecodedEnvelope = (name, bytes, updated)
        logger.debug("sealed a rotated refresh token")
    }

    /// Re-reads and checks the envelope, then seals `refreshToken` into it.
    func persist(
        _ refreshToken: RefreshToken,
        in unlocked: UnlockedEnvelope,
        under held: borrowing HeldSessionLock
    ) throws(VaultError) {
        try persist(refreshToken, onto: try verifiedEnvelope(in: unlocked, under: held), in: unlocked, under: held)
    }

    /// Turns device unlock on from an unlocked envelope: a random device key seals the data key in the
    /// envelope's device box, and the device keeps that key with the long secret. No Argon2id, no key
    /// service, no password-derived byte.
    func enableDeviceUnlock(_ unlocked: UnlockedEnvelope, under held: borrowing HeldSessionLock) throws(VaultError) {
        guard let longSecret = unlocked.longSecret?.utf8String() else { throw .noLongSecret(host: nil) }
        let deviceKey = XChaCha20Poly1305.generateKey()
        let envelope = try verifiedEnvelope(in: unlocked, under: held)
        let updated = try crypto(.cryptoFailed("sealing the device box failed")) { () throws(CryptoError) in
            try envelope.withDeviceWrap(
                dataKey: unlocked.dataKey,
                deviceWrapKey: try EnvelopeKeys.device(deviceKey: deviceKey, serverKey: unlocked.serverKey)
            )
        }
        try store.withLock { () throws(VaultError) in
            try store.write(updated.encoded(), to: StoreFile.envelope.name(userId: unlocked.userId))
        }
        let record = DeviceSecret(
            format: DeviceSecret.currentFormat,
            userId: unlocked.userId,
            keyId: unlocked.keyId,
            longSecret: longSecret,
            deviceKey: deviceKey.base64URLEncodedString(),
            wrapKey: nil
        )
        // Encoding a struct of strings cannot fail.
        try deviceSecrets.save(SecureBytes(try! JSONEncoder().encode(record)), for: unlocked.userId)
        logger.debug("device unlock enabled")
    }
}
