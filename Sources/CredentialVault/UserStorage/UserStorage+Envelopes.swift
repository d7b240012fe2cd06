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

    /// The refresh token of a version 2 envelope whose data key is known.
    func open(
        _ envelope: Envelope,
        dataKey: SecureBytes,
        key: KeyServiceKey
    ) throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        let token = try crypto(.envelopeDidNotOpen) { () throws(CryptoError) in try envelope.openToken(dataKey: dataKey)
        }
        let unlocked = UnlockedEnvelope(
            userId: envelope.userId,
            keyId: envelope.keyId,
            dataKey: dataKey,
            serverKey: key.key,
            longSecret: key.longSecret
        )
        return (token, unlocked)
    }

    /// Opens a version 1 envelope with the password's wrap key and writes it anew as version 2: a random data
    /// key, sealed under the password path, the same key id and KDF parameters, this storage's binding. Device
    /// unlock, when it was on, is set up again without the wrap key its version 1 file kept.
    func upgrade(
        _ old: Envelope,
        wrapKey: SecureBytes,
        key: KeyServiceKey,
        under held: borrowing HeldSessionLock
    ) throws(VaultError) -> (refreshToken: RefreshToken, envelope: UnlockedEnvelope) {
        let token = try crypto(.envelopeDidNotOpen) { () throws(CryptoError) in
            try old.open(dataKey: try EnvelopeKeys.version1DataKey(wrapKey: wrapKey, serverKey: key.key))
        }
        guard let text = token.utf8String(), !text.isEmpty else {
            throw .unexpectedRecord("the sealed refresh token is not text")
        }
        let parameters = try crypto(.unexpectedRecord("the envelope's key-derivation settings are unusable")) {
            () throws(CryptoError) in try old.parameters()
        }
        let (envelope, dataKey) = try crypto(.cryptoFailed("sealing the refresh token failed")) {
            () throws(CryptoError) in
            try Envelope.seal(
                RefreshToken(token: text, userId: old.userId),
                userId: old.userId,
                keyId: old.keyId,
                parameters: parameters,
                binding: binding,
                passwordKey: try EnvelopeKeys.password(wrapKey: wrapKey, serverKey: key.key),
                now: now()
            )
        }
        let hadDeviceUnlock = hasDeviceUnlock(userId: old.userId)
        try store.withLock { () throws(VaultError) in
            try store.write(envelope.encoded(), to: StoreFile.envelope.name(userId: old.userId))
        }
        let unlocked = UnlockedEnvelope(
            userId: old.userId,
            keyId: old.keyId,
            dataKey: dataKey,
            serverKey: key.key,
            longSecret: key.longSecret
        )
        if hadDeviceUnlock {
            // The version 1 device file holds password-derived bytes: it is replaced, or removed when it
            // cannot be replaced.
            if unlocked.longSecret != nil {
                try enableDeviceUnlock(unlocked, under: held)
            } else {
                try deviceSecrets.remove(for: old.userId)
            }
        }
        logger.debug("rewrote a version 1 envelope as version 2")
        return (RefreshToken(token: text, userId: old.userId), unlocked)
    }

    /// Removes the envelope's device box, if any (device unlock off).
    func removeDeviceBox(userId: String, under held: borrowing HeldSessionLock) throws(VaultError) {
        let name = StoreFile.envelope.name(userId: userId)
        try store.withLock { () throws(VaultError) in
            guard let data = try store.read(name) else { return }
            var envelope = try Envelope.decode(data, path: name)
            guard envelope.deviceWrap != nil else { return }
            envelope.deviceWrap = nil
            try store.write(envelope.encoded(), to: name)
        }
    }

    /// The binding sealed with `refreshToken`: the configured one, naming the client this library registered when the
    /// token carries one.
    func binding(for refreshToken: RefreshToken) -> EnvelopeBinding? {
        guard let client = refreshToken.client else { return binding }
        return binding?.registered(clientId: client.clientId)
    }

    /// The user's envelope, refused before anything is sent when it belongs to another issuer, client or key
    /// service than this storage's binding.
    func requireEnvelope(userId: String) throws(VaultError) -> Envelope {
        try requireEnvelopeFile(userId: userId).envelope
    }

    /// ``requireEnvelope(userId:)`` and the file's bytes as read; `read` is the file as read already under the same hold
    /// of the session lock (``soleUser()``), which is not read again.
    func requireEnvelopeFile(
        userId: String,
        read: EnvelopeFile? = nil
    ) throws(VaultError) -> EnvelopeFile {
        let file: EnvelopeFile?
        if let read {
            try Self.validate(userId: userId)
            file = read
        } else {
            file = try readEnvelopeFile(userId: userId)
        }
        guard let (envelope, bytes) = file else { throw .notRegistered(userId: userId) }
        // Refused before the password costs an Argon2id or a key-service attempt: there is nothing to open.
        guard !envelope.isLoggedOut else { throw .loggedOut(userId: userId) }
        if let binding, let stored = envelope.binding {
            let differences = stored.differences(from: binding)
            guard differences.isEmpty else { throw .bindingMismatch(userId: userId, differences) }
        }
        return (envelope, bytes)
    }

    /// Erases the refresh token from the user's envelope (``Envelope/erasingToken(now:)``): the user stays listed,
    /// the key and device unlock stay, and no login opens from it any more.
    func eraseRefreshToken(userId: String, under held: borrowing HeldSessionLock) throws(VaultError) {
        try Self.validate(userId: userId)
        let name = StoreFile.envelope.name(userId: userId)
        try store.withLock { () throws(VaultError) in
            guard let data = try store.read(name) else { return }
            let envelope = try Envelope.decode(data, path: name)
            guard !envelope.isLoggedOut else { return }
            try store.write(envelope.erasingToken(now: now()).encoded(), to: name)
        }
        logger.debug("erased the refresh token from a user's envelope")
    }

    func readEnvelope(userId: String) throws(VaultError) -> Envelope? {
        try readEnvelopeFile(userId: userId)?.envelope
    }

    /// ``readEnvelope(userId:)`` and the file's bytes as read.
    func readEnvelopeFile(userId: String) throws(VaultError) -> EnvelopeFile? {
        try Self.validate(userId: userId)
        let name = StoreFile.envelope.name(userId: userId)
        guard let data = try store.withLock({ () throws(VaultError) -> Data? in try store.read(name) }) else {
            return nil
        }
        let envelope = try decodeEnvelope(data, name: name)
        // A file renamed from another user's name opens nothing: its header names the other user.
        guard envelope.userId == userId else {
            throw .unexpectedRecord("the envelope stored for this user belongs to another user")
        }
        return (envelope, data)
    }

    /// ``Envelope/decode(_:path:)`` of `data`, read from `name` under the store's lock; bytes equal to the last ones
    /// decoded from that name, or written to it with a rotated token (``lastDecodedEnvelope``), give that envelope
    /// again without a second parse (decoding is a function of the bytes).
    func decodeEnvelope(_ data: Data, name: String) throws(VaultError) -> Envelope {
        if let last = lastDecodedEnvelope, last.name == name, last.bytes == data { return last.envelope }
        let envelope = try Envelope.decode(data, path: name)
        lastDecodedEnvelope = (name, data, envelope)
        return envelope
    }

    static func validate(userId: String) throws(VaultError) {
        guard !userId.isEmpty, userId.utf8.count <= 1024 else { throw .invalidUserId }
    }

    /// A new password: not empty, and at least ``minimumPasswordLength`` characters.
    func checkNewPassword(_ password: String) throws(VaultError) {
        guard !password.isEmpty else { throw .invalidPassword("it is empty") }
        guard password.count >= minimumPasswordLength else {
            throw .invalidPassword("a new password needs at least \(minimumPasswordLength) characters")
        }
    }

    /// Argon2id's 64 bytes: the first half is the key-service secret (sent in v1, blinded in v2), the second never
    /// leaves.
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

    /// Runs a `key` call and keeps the count of wrong secrets in a row: a success resets it to a known 0, a 401
    /// raises it, and the 401 that reaches ``attemptsBeforeLock`` is reported as the lock it most likely caused
    /// (`.keyLockedHere`: this device's count, not the key service's word).
    ///
    /// The record says whether the count is complete: it is written as `0` at a success and for a new key, so a
    /// count that starts without it (the record removed, or a store that could not take it) is kept as `N?`, at
    /// least N (``wrongPasswordsKnownHere(userId:)`` is then nil).
    ///
    /// `recorded` is the record as read under the same hold of the session lock (``recordedAttempts(userId:)``),
    /// which every writer of it holds: a password login reads it while Argon2id computes (issue 23), and a success
    /// that finds `0` there writes nothing.
    func countingAttempts<Opened>(
        userId: String,
        recorded: Data?,
        _ call: () async throws(VaultError) -> Opened
    ) async throws(VaultError) -> Opened {
        let name = StoreFile.attempts.name(userId: userId)
        let result: Result<Opened, VaultError>
        do { result = .success(try await keyServiceCall(call)) } catch { result = .failure(error) }
        switch result {
        case .success(let key):
            // Best effort: a store that cannot take the record (read-only) still logs in; the count is then unknown.
            if recorded != Data("0".utf8) {
                try? store.withLock { () throws(VaultError) in try store.write(Data("0".utf8), to: name) }
            }
            return key
        case .failure(let error) where error.isWrongPassword:
            let count = try store.withLock { () throws(VaultError) -> Int in
                let previous = try store.read(name).map { AttemptCount(String(decoding: $0, as: UTF8.self)) }
                let count = AttemptCount(count: (previous?.count ?? 0) + 1, isComplete: previous?.isComplete ?? false)
                try store.write(Data(count.text.utf8), to: name)
                return count.count
            }
            logger.debug("the key service refused the secret", metadata: ["wrongInARow": "\(count)"])
            throw count >= Self.attemptsBeforeLock ? .keyLockedHere(host: error.host) : error
        case .failure(let error):
            throw error
        }
    }

    /// The record of wrong passwords in a row (``countingAttempts(userId:recorded:_:)``); nil when there is none or
    /// it cannot be read.
    nonisolated func recordedAttempts(userId: String) -> Data? {
        try? store.read(StoreFile.attempts.name(userId: userId))
    }

    /// Runs a key-service call; whatever it throws is the key service's error.
    func keyServiceCall<T>(_ body: () async throws(VaultError) -> T) async throws(VaultError) -> T {
        do { return try await body() } catch { throw error.attributed(to: .keyService) }
    }

    /// Runs a crypto step; its failure is `error` (the words a caller can act on, never the crypto detail).
    func crypto<T>(_ failure: VaultError, _ body: () throws(CryptoError) -> T) throws(VaultError) -> T {
        do { return try body() } catch { throw failure }
    }
}
