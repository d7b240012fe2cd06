public import Foundation
public import Logging
public import VaultCrypto

/// Encrypted refresh tokens per user (THP's `THPUserStorage`, TIM's multi-user `TIMDataStorage`).
///
/// A password opens a user's refresh token only together with the key service: Argon2id turns the
/// password into `authSecret` (sent to the key service, never the password) and `wrapKey` (kept in
/// memory); the token is sealed with a random data key, and the data key is sealed under a key made from
/// `wrapKey` and the key service's key. Every box is XChaCha20-Poly1305 bound to the envelope header. Three
/// wrong passwords in a row lock the key on the server for good.
///
/// Each method that takes a password costs one Argon2id derivation (about 0.1 s with the defaults), run
/// off Swift's cooperative pool, and one key-service call. Every method that changes a stored login holds
/// the store's session lock, as ``Auth`` does for a login or a refresh, so processes never interleave.
public actor UserStorage {
    /// The key service locks a key on the third wrong secret in a row, yet answers that attempt with a
    /// plain 401; this many failures in a row seen here mean the key is most likely locked now.
    static let attemptsBeforeLock = 3

    let keyService: any KeyService
    /// The key-service protocol of the keys this storage creates (existing envelopes open with their own).
    let keyServiceVersion: KeyServiceVersion
    let store: FileStore
    let deviceSecrets: any DeviceSecretStore
    let binding: EnvelopeBinding?
    let minimumPasswordLength: Int
    let logger: Logger
    let opsLimit: UInt64
    let memLimitBytes: UInt64
    let now: @Sendable () -> Date
    /// The last envelope file decoded or written with a rotated token, by name and exact bytes
    /// (``decodeEnvelope(_:name:)``): a login reads the same unchanged file up to three times under one session lock
    /// (to find the user, to unlock, and before the refresh), and decodes it once; the next login reads what this one
    /// wrote, and decodes nothing. Public data only: an envelope holds no secret in the clear.
    var lastDecodedEnvelope: (name: String, bytes: Data, envelope: Envelope)?

    /// A storage over `keyService`, with envelopes in `directory`.
    /// - Parameters:
    ///   - keyService: the key service that holds the password keys (and locks them after three wrong passwords).
    ///   - directory: default `$XDG_DATA_HOME/credential-vault`, else `~/.local/share/credential-vault`;
    ///     created with mode 0700; refused when others can read or write it.
    ///   - deviceSecrets: where device unlock keeps its secret; default a 0600 file in `directory`.
    ///   - binding: the issuer, client and key service the stored tokens belong to; sealed into every
    ///     envelope, and a stored login of another binding is refused before anything is sent. ``Vault``
    ///     passes its configuration's; nil stores and checks none.
    ///   - keyServiceVersion: the key-service protocol of new keys (a new password); an envelope opens with the
    ///     protocol its header names. v1 (TIM's) by default; v2 when the key service serves it (``KeyServiceVersion``).
    ///   - minimumPasswordLength: the fewest characters a new password may have (at least 1: an empty password
    ///     is always refused). Short PINs are reasonable: the key service locks after three wrong ones.
    ///   - opsLimit: Argon2id passes for new passwords; existing envelopes keep their own.
    ///   - memLimitBytes: Argon2id memory for new passwords, in bytes; existing envelopes keep their own.
    ///   - now: the wall clock, for the `createdAt` and `updatedAt` an envelope records; tests pass their own.
    ///   - logger: decisions at debug level; never a secret.
    public init(
        keyService: any KeyService,
        directory: URL? = nil,
        deviceSecrets: (any DeviceSecretStore)? = nil,
        binding: EnvelopeBinding? = nil,
        keyServiceVersion: KeyServiceVersion = .v1,
        minimumPasswordLength: Int = 1,
        opsLimit: UInt64 = Argon2idParameters.defaultOpsLimit,
        memLimitBytes: UInt64 = Argon2idParameters.defaultMemLimitBytes,
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "credential-vault")
    ) {
        let directory = directory ?? FileStore.defaultDirectory
        self.keyService = keyService
        store = FileStore(directory: directory)
        self.deviceSecrets = StoreAttributedDeviceSecrets(
            base: deviceSecrets ?? FileDeviceSecretStore(directory: directory)
        )
        self.binding = binding
        self.keyServiceVersion = keyServiceVersion
        self.minimumPasswordLength = max(1, minimumPasswordLength)
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.now = now
        self.logger = logger
    }

    /// The directory the envelopes live in.
    public nonisolated var directory: URL { store.directory }

    // MARK: Storing

    /// Seals `refreshToken` under a new password: a new salt, a new key at the key service, a new envelope.
    /// Replaces the user's earlier envelope and turns device unlock off (it belonged to the old key).
    /// - Throws: ``VaultError``: `.invalidPassword`, key service, storage, or an existing record of a newer
    ///   format.
    public func storeRefreshToken(
        _ refreshToken: RefreshToken,
        withNewPassword password: String
    ) async throws(VaultError) {
        try await withSessionLock { (held) async throws(VaultError) in
            _ = try await sealUnderNewPassword(refreshToken, password: password, under: held)
        }
    }

    /// Seals `refreshToken` in the user's existing envelope, after the key service accepts `password`.
    /// Counts as a password attempt at the key service.
    public func storeRefreshToken(
        _ refreshToken: RefreshToken,
        withExistingPassword password: String
    ) async throws(VaultError) {
        try await withSessionLock { (held) async throws(VaultError) in
            let (_, envelope) = try await unlock(userId: refreshToken.userId, password: password, under: held)
            try persist(refreshToken, in: envelope, under: held)
        }
    }

    /// Opens the user's refresh token with `password`.
    /// - Throws: ``VaultError``; ask `isWrongPassword` (the key service said 401) and `isKeyLocked`.
    public func getStoredRefreshToken(userId: String, password: String) async throws(VaultError) -> RefreshToken {
        try await withSessionLock { (held) async throws(VaultError) in
            try await unlock(userId: userId, password: password, under: held).refreshToken
        }
    }

    /// Opens the token with `oldPassword` and seals it again under `newPassword` (a new key).
    /// Device unlock, when it was on, stays on with the new key.
    public func changePassword(
        userId: String,
        from oldPassword: String,
        to newPassword: String
    ) async throws(VaultError) {
        try checkNewPassword(newPassword)
        try await withSessionLock { (held) async throws(VaultError) in
            let (token, _) = try await unlock(userId: userId, password: oldPassword, under: held)
            let hadDeviceUnlock = hasDeviceUnlock(userId: userId)
            let created = try await sealUnderNewPassword(token, password: newPassword, under: held)
            if hadDeviceUnlock { try enableDeviceUnlock(created, under: held) }
        }
    }

    // MARK: Users

    /// The users with an envelope in the store (read from the envelopes; there is no separate index).
    /// - Throws: ``VaultError`` when the directory cannot be read or is open to others.
    public var availableUserIds: [String] {
        get throws(VaultError) { try storedEnvelopeFiles().map(\.envelope.userId).sorted() }
    }

    /// An envelope as read from its file, with the file's bytes.
    typealias EnvelopeFile = (envelope: Envelope, bytes: Data)

    /// The one user stored, for a call that names none, with that user's envelope file as read (nil when the file is
    /// not under the name its user gives: it is then read by that name, and refused there).
    /// - Throws: ``VaultError`` `.notRegistered` when no user is stored, `.invalidConfiguration` when several are.
    func soleUser() throws(VaultError) -> (userId: String, file: EnvelopeFile?) {
        let files = try storedEnvelopeFiles()
        guard files.count == 1, let (name, envelope, bytes) = files.first else {
            if files.isEmpty { throw .notRegistered(userId: "") }
            throw .invalidConfiguration("\(files.count) users are stored; say which one")
        }
        let named = name == StoreFile.envelope.name(userId: envelope.userId)
        return (envelope.userId, named ? (envelope, bytes) : nil)
    }

    /// Every envelope in the store with its file's name and bytes: one listing of the directory, which also serves
    /// the cleanup of stale temporary files, and one read of each, under the store's lock.
    private func storedEnvelopeFiles() throws(VaultError) -> [(name: String, envelope: Envelope, bytes: Data)] {
        let found = try store.withLock { () throws(VaultError) -> [(name: String, data: Data)] in
            let listing = try store.listing()
            store.removeStaleTemporaryFiles(among: listing)
            var found: [(name: String, data: Data)] = []
            for name in FileStore.names(in: listing, withSuffix: "." + StoreFile.envelope.rawValue) {
                guard let data = try store.read(name) else { continue }
                found.append((name, data))
            }
            return found
        }
        var files: [(name: String, envelope: Envelope, bytes: Data)] = []
        for (name, data) in found { files.append((name, try decodeEnvelope(data, name: name), data)) }
        return files
    }

    /// Whether a login is stored for `userId`: an envelope that still holds a refresh token (a logout without
    /// clearing the user erases the token and keeps the envelope).
    public func hasStoredRefreshToken(userId: String) -> Bool {
        guard let envelope = try? readEnvelope(userId: userId) else { return false }
        return !envelope.isLoggedOut
    }

    /// Deletes everything of `userId`: the envelope and the device-unlock secret. Nothing of the user
    /// remains in the store directory.
    public func clear(userId: String) async throws(VaultError) {
        try await withSessionLock { (_) async throws(VaultError) in
            try deviceSecrets.remove(for: userId)
            try store.withLock { () throws(VaultError) in
                // A temporary file left by a killed writer may hold this user's envelope.
                store.removeStaleTemporaryFiles()
                for kind in StoreFile.allCases { try store.remove(kind.name(userId: userId)) }
            }
        }
        logger.debug("cleared a user's envelope and device secret")
    }

    /// Wrong passwords in a row this device has seen for `userId` since the last success (0 when none).
    /// The key service counts too, and its word is the one that locks; this is what is known here.
    package func consecutiveWrongPasswords(userId: String) -> Int {
        guard let data = try? store.read(StoreFile.attempts.name(userId: userId)) else { return 0 }
        return AttemptCount(String(decoding: data, as: UTF8.self)).count
    }

    /// ``consecutiveWrongPasswords(userId:)`` when this device has seen every attempt since the key's count was last
    /// known to be 0 (a success here, or a new key); nil when it has not (its record is missing or was started
    /// without that): the key service may then have counted more, and may already have locked the key.
    package func wrongPasswordsKnownHere(userId: String) -> Int? {
        guard let data = try? store.read(StoreFile.attempts.name(userId: userId)) else { return nil }
        let count = AttemptCount(String(decoding: data, as: UTF8.self))
        return count.isComplete ? count.count : nil
    }

    // MARK: Device unlock

    /// Turns device unlock on: after the key service accepts `password`, keeps its long secret and a random
    /// device key on this device, so ``getStoredRefreshTokenViaDeviceUnlock(userId:)`` needs no password.
    /// Nothing derived from the password is kept.
    ///
    /// With a session open, ``Auth/enableDeviceUnlock()`` does the same without a second Argon2id or
    /// key-service call.
    public func enableDeviceUnlock(userId: String, password: String) async throws(VaultError) {
        try await withSessionLock { (held) async throws(VaultError) in
            let (_, envelope) = try await unlock(userId: userId, password: password, under: held)
            try enableDeviceUnlock(envelope, under: held)
        }
    }

    /// Turns device unlock off: forgets its secret and removes the envelope's device box.
    public func disableDeviceUnlock(userId: String) async throws(VaultError) {
        try await withSessionLock { (held) async throws(VaultError) in
            try deviceSecrets.remove(for: userId)
            try removeDeviceBox(userId: userId, under: held)
        }
    }

    /// Whether device unlock is on for `userId`.
    public func hasDeviceUnlock(userId: String) -> Bool {
        (try? deviceSecrets.load(for: userId)) != nil
    }

    /// Opens the user's refresh token with the device secret instead of the password.
    /// - Throws: ``VaultError``; `isDeviceUnlockFailed` when it is off or refused, `isKeyLocked` when locked.
    public func getStoredRefreshTokenViaDeviceUnlock(userId: String) async throws(VaultError) -> RefreshToken {
        try await withSessionLock { (held) async throws(VaultError) in
            try await unlockViaDeviceUnlock(userId: userId, under: held).refreshToken
        }
    }

    /// Runs `body` holding the store's session lock, on the caller's isolation (``Auth``'s for a login or a refresh,
    /// this actor's for the calls above), with the ``HeldSessionLock`` that the steps of a login ask for; the lock is
    /// released when `body` returns. Waits for another process's session up to a minute.
    /// - Throws: ``VaultError``: `.lockTimeout`, `.cancelled`, a file-system error; or what `body` throws.
    func withSessionLock<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (borrowing HeldSessionLock) async throws(VaultError) -> T
    ) async throws(VaultError) -> T {
        try await HeldSessionLock.holding(in: store, body)
    }
}
