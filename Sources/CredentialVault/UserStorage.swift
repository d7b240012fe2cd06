import Foundation
import VaultCrypto

/// Encrypted refresh tokens per user (THP's `THPUserStorage`, TIM's multi-user `TIMDataStorage`).
///
/// A password opens a user's refresh token only together with the key service:
/// Argon2id turns the password into `authSecret` (sent to the key service, never the password) and
/// `wrapKey` (kept); the data key is keyed BLAKE2b of the server's key under `wrapKey`; the token is
/// sealed with XChaCha20-Poly1305 bound to the envelope header. Three wrong passwords in a row lock
/// the key on the server for good.
///
/// Each method that takes a password costs one Argon2id derivation (about 0.1 s with the defaults),
/// run off Swift's cooperative pool, and one key-service call.
public actor UserStorage {
    enum FileKind: String {
        case envelope = "vault"
        case device = "device"
        case attempts = "attempts"
    }

    /// The key service locks a key on the third wrong secret in a row, yet answers that attempt with a
    /// plain 401; this many local failures in a row mean the key is now locked.
    static let attemptsBeforeLock = 3

    private let keyService: any KeyService
    private let store: FileStore
    private let deviceSecrets: any DeviceSecretStore
    private let opsLimit: UInt64
    private let memLimitBytes: UInt64
    private let now: @Sendable () -> Date

    static let dataKeyDomain = "credential-vault/v1/data-key"

    /// A storage over `keyService`, with envelopes in `directory`.
    /// - Parameters:
    ///   - directory: default `$XDG_DATA_HOME/credential-vault`, else `~/.local/share/credential-vault`;
    ///     created with mode 0700; refused when others can read or write it.
    ///   - deviceSecrets: where device unlock keeps its secret; default a 0600 file in `directory`.
    ///   - opsLimit, memLimitBytes: Argon2id cost for new passwords; existing envelopes keep their own.
    public init(
        keyService: any KeyService,
        directory: URL? = nil,
        deviceSecrets: (any DeviceSecretStore)? = nil,
        opsLimit: UInt64 = Argon2idParameters.defaultOpsLimit,
        memLimitBytes: UInt64 = Argon2idParameters.defaultMemLimitBytes,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let directory = directory ?? FileStore.defaultDirectory
        self.keyService = keyService
        store = FileStore(directory: directory)
        self.deviceSecrets = deviceSecrets ?? FileDeviceSecretStore(directory: directory)
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.now = now
    }

    /// The directory the envelopes live in.
    public nonisolated var directory: URL { store.directory }

    // MARK: Storing

    /// Seals `refreshToken` under a new password: a new salt, a new key at the key service, a new envelope.
    /// Replaces the user's earlier envelope and turns device unlock off (it belonged to the old key).
    /// - Throws: ``VaultError`` (`.storage`): key service, storage or an existing record of a newer format.
    public func storeRefreshToken(
        _ refreshToken: RefreshToken,
        withNewPassword password: String
    ) async throws(VaultError) {
        _ = try await storeWithNewPassword(refreshToken, password: password)
    }

    /// Seals `refreshToken` in the user's existing envelope, after the key service accepts `password`.
    /// Counts as a password attempt at the key service.
    public func storeRefreshToken(
        _ refreshToken: RefreshToken,
        withExistingPassword password: String
    ) async throws(VaultError) {
        let (_, session) = try await openSession(userId: refreshToken.userId, password: password)
        try persist(refreshToken, session: session)
    }

    /// Opens the user's refresh token with `password`.
    /// - Throws: ``VaultError``; ask `isWrongPassword` (the key service said 401) and `isKeyLocked`.
    public func getStoredRefreshToken(userId: String, password: String) async throws(VaultError) -> RefreshToken {
        try await openSession(userId: userId, password: password).refreshToken
    }

    /// Opens the token with `oldPassword` and seals it again under `newPassword` (a new key).
    /// Device unlock, when it was on, stays on with the new key.
    public func changePassword(
        userId: String,
        from oldPassword: String,
        to newPassword: String
    ) async throws(VaultError) {
        let (token, _) = try await openSession(userId: userId, password: oldPassword)
        let hadDeviceUnlock = hasDeviceUnlock(userId: userId)
        let created = try await storeWithNewPassword(token, password: newPassword)
        if hadDeviceUnlock, let longSecret = created.key.longSecret {
            try saveDeviceSecret(
                userId: userId,
                keyId: created.key.keyId,
                longSecret: longSecret,
                wrapKey: created.wrapKey
            )
        }
    }

    // MARK: Users

    /// The users with an envelope in the store (read from the envelopes; there is no separate index).
    /// - Throws: ``VaultError`` when the directory cannot be read or is open to others.
    public var availableUserIds: [String] {
        get throws(VaultError) {
            try storage { () throws(SecureStorageError) in
                try store.withLock { () throws(SecureStorageError) in
                    store.removeStaleTemporaryFiles()
                    var users: [String] = []
                    for name in try store.names(withSuffix: "." + FileKind.envelope.rawValue) {
                        guard let data = try store.read(name) else { continue }
                        users.append(try Envelope.decode(data, path: name).userId)
                    }
                    return users.sorted()
                }
            }
        }
    }

    /// Whether an envelope is stored for `userId`.
    public func hasStoredRefreshToken(userId: String) -> Bool {
        (try? readEnvelope(userId: userId)) != nil
    }

    /// Deletes everything of `userId`: the envelope and the device-unlock secret. Nothing of the user
    /// remains in the store directory.
    public func clear(userId: String) throws(VaultError) {
        try storage { () throws(SecureStorageError) in
            try deviceSecrets.remove(for: userId)
            try store.withLock { () throws(SecureStorageError) in
                // A temporary file left by a killed writer may hold this user's envelope.
                store.removeStaleTemporaryFiles()
                try store.remove(Self.fileName(userId: userId, kind: .envelope))
                try store.remove(Self.fileName(userId: userId, kind: .device))
                try store.remove(Self.fileName(userId: userId, kind: .attempts))
            }
        }
    }

    /// Wrong passwords in a row this device has seen for `userId` since the last success (0 when none);
    /// three mean the key is locked. The count lives on the server; this is what is known here.
    public func consecutiveWrongPasswords(userId: String) -> Int {
        guard let data = try? store.read(Self.fileName(userId: userId, kind: .attempts)) else { return 0 }
        return Int(String(decoding: data, as: UTF8.self)) ?? 0
    }

    // MARK: Device unlock

    /// Turns device unlock on: after the key service accepts `password`, keeps its long secret and the
    /// wrap key on this device so ``getStoredRefreshTokenViaDeviceUnlock(userId:)`` needs no password.
    public func enableDeviceUnlock(userId: String, password: String) async throws(VaultError) {
        let (_, session) = try await openSession(userId: userId, password: password)
        guard let longSecret = session.longSecret else {
            throw .storage(.encryptedStorageFailed(.keyServiceFailed(.responseHasNoLongSecret)))
        }
        try saveDeviceSecret(userId: userId, keyId: session.keyId, longSecret: longSecret, wrapKey: session.wrapKey)
    }

    /// Turns device unlock off and forgets its secret.
    public func disableDeviceUnlock(userId: String) throws(VaultError) {
        try storage { () throws(SecureStorageError) in try deviceSecrets.remove(for: userId) }
    }

    /// Whether device unlock is on for `userId`.
    public func hasDeviceUnlock(userId: String) -> Bool {
        (try? deviceSecrets.load(for: userId)) != nil
    }

    /// Opens the user's refresh token with the device secret instead of the password.
    /// - Throws: ``VaultError``; `isDeviceUnlockFailed` when it is off or refused, `isKeyLocked` when locked.
    public func getStoredRefreshTokenViaDeviceUnlock(userId: String) async throws(VaultError) -> RefreshToken {
        try await openSessionViaDeviceUnlock(userId: userId).refreshToken
    }

    // MARK: Sessions (for Auth)

    /// What a login keeps: the data key of the user's envelope, so a rotated refresh token can be sealed
    /// again without asking for the password. The key is zeroed when the last reference goes.
    struct Session: Sendable {
        let userId: String
        let keyId: String
        let dataKey: SecureBytes
        let wrapKey: SecureBytes
        let longSecret: SecureBytes?
        /// How long the password steps took (for ``Auth/lastLoginTimings``).
        var timings: (kdf: Duration, keyService: Duration)?
    }

    func openSession(
        userId: String,
        password: String
    ) async throws(VaultError) -> (refreshToken: RefreshToken, session: Session) {
        let envelope = try requireEnvelope(userId: userId)
        let parameters = try crypto { () throws(CryptoError) in try envelope.parameters() }
        let clock = ContinuousClock()
        let started = clock.now
        let (authSecret, wrapKey) = try await deriveSecrets(password, parameters)
        let derived = clock.now
        let key = try await countingAttempts(userId: userId) { () async throws(KeyServiceError) in
            try await keyService.getKey(keyId: envelope.keyId, secret: authSecret.base64URLEncoded())
        }
        var opened = try open(envelope, key: key, wrapKey: wrapKey, longSecret: key.longSecret)
        opened.session.timings = (kdf: derived - started, keyService: clock.now - derived)
        return opened
    }

    func openSessionViaDeviceUnlock(
        userId: String
    ) async throws(VaultError) -> (refreshToken: RefreshToken, session: Session) {
        let envelope = try requireEnvelope(userId: userId)
        let stored: DeviceSecret
        do {
            guard let blob = try deviceSecrets.load(for: userId) else {
                throw VaultError.storage(.deviceUnlockFailed(reason: "it is not enabled for this user"))
            }
            stored = try JSONDecoder().decode(DeviceSecret.self, from: blob.copyToData())
        } catch let error as VaultError {
            throw error
        } catch let error as SecureStorageError {
            throw .storage(.encryptedStorageFailed(.secureStorageFailed(error)))
        } catch {
            throw .storage(.deviceUnlockFailed(reason: "its stored secret is damaged; enable it again"))
        }
        guard stored.format == DeviceSecret.currentFormat, stored.userId == userId, stored.keyId == envelope.keyId,
            let wrapKeyData = try? Base64URL.decode(stored.wrapKey), wrapKeyData.count == 32
        else {
            throw .storage(.deviceUnlockFailed(reason: "it was set up for an earlier password; enable it again"))
        }
        let longSecret = SecureBytes(Data(stored.longSecret.utf8))
        let key: KeyServiceKey
        do {
            key = try await countingAttempts(userId: userId) { () async throws(KeyServiceError) in
                try await keyService.getKey(keyId: envelope.keyId, longSecret: longSecret)
            }
        } catch .storage(.encryptedStorageFailed(.keyServiceFailed(.badPassword))) {
            throw .storage(.deviceUnlockFailed(reason: "the key service refused the device secret"))
        }
        return try open(envelope, key: key, wrapKey: SecureBytes(wrapKeyData), longSecret: longSecret)
    }

    /// Holds the store's session lock until the returned value is released (see ``SessionLock``).
    func sessionLock() async throws(VaultError) -> SessionLock {
        do {
            return try await SessionLock.acquire(in: store)
        } catch {
            throw .storage(.encryptedStorageFailed(.secureStorageFailed(error)))
        }
    }

    /// The refresh token stored now for the session's user, opened with the session's data key (no
    /// password, no key service): another process may have rotated it since this session began.
    func storedRefreshToken(session: Session) throws(VaultError) -> RefreshToken {
        guard let envelope = try readEnvelope(userId: session.userId), envelope.keyId == session.keyId else {
            throw .storage(.noStoredRefreshToken(userId: session.userId))
        }
        guard let token = (try? envelope.open(dataKey: session.dataKey))?.utf8String() else {
            throw .storage(.encryptedStorageFailed(.failedToDecryptData))
        }
        return RefreshToken(token: token, userId: session.userId)
    }

    /// Seals `refreshToken` under a new password and returns the session that can seal its successors.
    func storeReturningSession(
        _ refreshToken: RefreshToken,
        withNewPassword password: String
    ) async throws(VaultError) -> Session {
        let created = try await storeWithNewPassword(refreshToken, password: password)
        return Session(
            userId: refreshToken.userId,
            keyId: created.key.keyId,
            dataKey: try dataKey(wrapKey: created.wrapKey, serverKey: created.key.key),
            wrapKey: created.wrapKey,
            longSecret: created.key.longSecret
        )
    }

    /// Seals `refreshToken` with the session's data key and writes it atomically, keeping the envelope header.
    /// Refuses when the envelope changed key meanwhile (a new password was set elsewhere).
    func persist(_ refreshToken: RefreshToken, session: Session) throws(VaultError) {
        guard refreshToken.userId == session.userId else {
            throw .storage(.encryptedStorageFailed(.unexpectedData(reason: "the token belongs to another user")))
        }
        try storage { () throws(SecureStorageError) in
            try store.withLock { () throws(SecureStorageError) in
                let name = Self.fileName(userId: session.userId, kind: .envelope)
                guard let data = try store.read(name) else {
                    throw .corruptRecord(path: name, reason: "it was removed")
                }
                let envelope = try Envelope.decode(data, path: name)
                guard envelope.keyId == session.keyId, envelope.userId == session.userId else {
                    throw .corruptRecord(path: name, reason: "a new password was set meanwhile")
                }
                let updated: Envelope
                do {
                    updated = try envelope.resealing(
                        SecureBytes(Data(refreshToken.token.utf8)),
                        dataKey: session.dataKey,
                        now: now()
                    )
                } catch {
                    throw .ioFailed(operation: "seal the refresh token for", path: name, reason: "\(error)")
                }
                try store.write(updated.encoded(), to: name)
            }
        }
    }

    // MARK: Internals

    private func storeWithNewPassword(
        _ refreshToken: RefreshToken,
        password: String
    ) async throws(VaultError) -> (key: KeyServiceKey, wrapKey: SecureBytes) {
        try Self.validate(userId: refreshToken.userId)
        let name = Self.fileName(userId: refreshToken.userId, kind: .envelope)
        // Checked before a key is created at the key service, and again under the lock before writing.
        try storage { () throws(SecureStorageError) in
            try store.withLock { () throws(SecureStorageError) in try refuseUnreadableFormat(name) }
        }
        let parameters = try crypto { () throws(CryptoError) in
            try Argon2idParameters.generate(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        }
        let (authSecret, wrapKey) = try await deriveSecrets(password, parameters)
        let key = try await keyServiceCall { () async throws(KeyServiceError) in
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
            throw .storage(.encryptedStorageFailed(.failedToEncryptData))
        }
        try storage { () throws(SecureStorageError) in
            try store.withLock { () throws(SecureStorageError) in
                try refuseUnreadableFormat(name)
                try store.write(envelope.encoded(), to: name)
                try store.remove(Self.fileName(userId: refreshToken.userId, kind: .attempts))
            }
            // The old device secret belonged to the old key.
            try deviceSecrets.remove(for: refreshToken.userId)
        }
        return (key, wrapKey)
    }

    /// A record this version cannot read is reported, never overwritten; a damaged one may be replaced.
    private func refuseUnreadableFormat(_ name: String) throws(SecureStorageError) {
        guard let existing = try store.read(name) else { return }
        do {
            _ = try Envelope.decode(existing, path: name)
        } catch .unsupportedFormat(let path, let format) {
            throw .unsupportedFormat(path: path, format: format)
        } catch {
            return
        }
    }

    private func open(
        _ envelope: Envelope,
        key: KeyServiceKey,
        wrapKey: SecureBytes,
        longSecret: SecureBytes?
    ) throws(VaultError) -> (refreshToken: RefreshToken, session: Session) {
        guard key.keyId == envelope.keyId else { throw .storage(.encryptedStorageFailed(.invalidEncryptionKey)) }
        let dataKey = try dataKey(wrapKey: wrapKey, serverKey: key.key)
        let plaintext: SecureBytes
        do {
            plaintext = try envelope.open(dataKey: dataKey)
        } catch {
            throw .storage(.encryptedStorageFailed(.failedToDecryptData))
        }
        guard let token = plaintext.utf8String(), !token.isEmpty else {
            throw .storage(.encryptedStorageFailed(.unexpectedData(reason: "the sealed refresh token is not text")))
        }
        let session = Session(
            userId: envelope.userId,
            keyId: envelope.keyId,
            dataKey: dataKey,
            wrapKey: wrapKey,
            longSecret: longSecret
        )
        return (RefreshToken(token: token, userId: envelope.userId), session)
    }

    private func dataKey(wrapKey: SecureBytes, serverKey: SecureBytes) throws(VaultError) -> SecureBytes {
        do {
            return try BLAKE2b.keyedHash(key: wrapKey, domain: Self.dataKeyDomain, message: serverKey)
        } catch {
            throw .storage(.encryptedStorageFailed(.invalidEncryptionKey))
        }
    }

    private func saveDeviceSecret(
        userId: String,
        keyId: String,
        longSecret: SecureBytes,
        wrapKey: SecureBytes
    ) throws(VaultError) {
        guard let longSecretText = longSecret.utf8String() else {
            throw .storage(.encryptedStorageFailed(.keyServiceFailed(.unableToDecode)))
        }
        let record = DeviceSecret(
            format: DeviceSecret.currentFormat,
            userId: userId,
            keyId: keyId,
            longSecret: longSecretText,
            wrapKey: wrapKey.base64URLEncodedString()
        )
        // Encoding a struct of strings cannot fail.
        let blob = SecureBytes(try! JSONEncoder().encode(record))
        try storage { () throws(SecureStorageError) in try deviceSecrets.save(blob, for: userId) }
    }

    private func requireEnvelope(userId: String) throws(VaultError) -> Envelope {
        guard let envelope = try readEnvelope(userId: userId) else {
            throw .storage(.noStoredRefreshToken(userId: userId))
        }
        return envelope
    }

    private func readEnvelope(userId: String) throws(VaultError) -> Envelope? {
        try Self.validate(userId: userId)
        let envelope = try storage { () throws(SecureStorageError) -> Envelope? in
            try store.withLock { () throws(SecureStorageError) -> Envelope? in
                let name = Self.fileName(userId: userId, kind: .envelope)
                return try store.read(name).map { data throws(SecureStorageError) in
                    try Envelope.decode(data, path: name)
                }
            }
        }
        // A file renamed from another user's name opens nothing: its header names the other user.
        if let envelope, envelope.userId != userId {
            throw .storage(
                .encryptedStorageFailed(
                    .unexpectedData(reason: "the envelope stored for this user belongs to another user")
                )
            )
        }
        return envelope
    }

    /// A user id is untrusted input: it never becomes a file name. The name is its SHA-256.
    static func fileName(userId: String, kind: FileKind) -> String {
        let digest = SHA256.hash(Data(userId.utf8)).map { String(format: "%02x", $0) }.joined()
        return "\(digest).\(kind.rawValue)"
    }

    static func validate(userId: String) throws(VaultError) {
        guard !userId.isEmpty, userId.utf8.count <= 1024 else { throw .storage(.invalidUserId) }
    }

    private func storage<T>(_ body: () throws(SecureStorageError) -> T) throws(VaultError) -> T {
        do { return try body() } catch { throw .storage(.encryptedStorageFailed(.secureStorageFailed(error))) }
    }

    private func crypto<T>(_ body: () throws(CryptoError) -> T) throws(VaultError) -> T {
        do { return try body() } catch {
            throw .storage(
                .encryptedStorageFailed(
                    .unexpectedData(reason: "the envelope's key-derivation settings are unusable: \(error.reason)")
                )
            )
        }
    }

    /// Argon2id's 64 bytes: the first half is sent (as the key-service secret), the second never leaves.
    private func deriveSecrets(
        _ password: String,
        _ parameters: Argon2idParameters
    ) async throws(VaultError) -> (authSecret: SecureBytes, wrapKey: SecureBytes) {
        do {
            let derived = try await Argon2id.deriveKey(password: password, parameters: parameters, outputLength: 64)
            return (derived.slice(0..<32), derived.slice(32..<64))
        } catch {
            throw .storage(.encryptedStorageFailed(.unexpectedData(reason: "key derivation failed: \(error.reason)")))
        }
    }

    /// Runs a `key` call and keeps the count of wrong secrets in a row: a success resets it, a 401 raises
    /// it, and the 401 that reaches ``attemptsBeforeLock`` is reported as the lock it caused.
    private func countingAttempts(
        userId: String,
        _ call: () async throws(KeyServiceError) -> KeyServiceKey
    ) async throws(VaultError) -> KeyServiceKey {
        let name = Self.fileName(userId: userId, kind: .attempts)
        let result: Result<KeyServiceKey, KeyServiceError>
        do { result = .success(try await call()) } catch { result = .failure(error) }
        switch result {
        case .success(let key):
            if store.exists(name) {
                try storage { () throws(SecureStorageError) in
                    try store.withLock { () throws(SecureStorageError) in try store.remove(name) }
                }
            }
            return key
        case .failure(.badPassword):
            let count = try storage { () throws(SecureStorageError) -> Int in
                try store.withLock { () throws(SecureStorageError) -> Int in
                    let previous = try store.read(name).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                    try store.write(Data(String(previous + 1).utf8), to: name)
                    return previous + 1
                }
            }
            let error: KeyServiceError = count >= Self.attemptsBeforeLock ? .keyLocked : .badPassword
            throw .storage(.encryptedStorageFailed(.keyServiceFailed(error)))
        case .failure(let error):
            throw .storage(.encryptedStorageFailed(.keyServiceFailed(error)))
        }
    }

    private func keyServiceCall<T>(_ body: () async throws(KeyServiceError) -> T) async throws(VaultError) -> T {
        do { return try await body() } catch { throw .storage(.encryptedStorageFailed(.keyServiceFailed(error))) }
    }
}
