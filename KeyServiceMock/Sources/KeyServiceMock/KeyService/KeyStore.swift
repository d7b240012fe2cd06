import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto

/// The keys, their verifiers and their failure counts.
///
/// Every key has its own lock: a request holds it while it checks the secret, changes the count
/// and writes the change to SQLite, so concurrent attempts on one key are counted exactly, while
/// requests on other keys go on in parallel (only SQLite's single writer is shared, and only by
/// requests that change a count). Records are cached after their first read; every change goes
/// through the cache entry and is committed before the answer, and the state directory's lock
/// keeps any other process from writing behind the cache's back.
final class KeyStore: Sendable {
    /// Consecutive wrong secrets that lock a key.
    static let attemptsBeforeLock = 3

    /// The outcome of a `key` request.
    enum Answer: Sendable {
        case granted(KeyGrant)
        /// The credential was wrong; `failures` in a row now, the key is locked at ``attemptsBeforeLock``.
        case wrongSecret(failures: Int)
        case locked
        case missing
    }

    private let state: StateStore
    private let entries = NIOLockedValueBox<[String: Entry]>([:])
    private let now: @Sendable () -> Date

    init(state: StateStore, now: @escaping @Sendable () -> Date) {
        self.state = state
        self.now = now
    }

    /// Creates a key for `secret`: 32 random bytes under a new UUID, and a new long secret.
    /// - Throws: when the key cannot be stored (the caller answers 500).
    func createKey(secret: String) throws -> KeyGrant {
        let keyId = UUID().uuidString.lowercased()
        let key = SecureRandom.bytes(count: 32)
        let longSecret = SecureRandom.bytes(count: 32)
        let longSecretText = Base64URL.encode(longSecret)
        let record = Record(
            keyId: keyId,
            key: key,
            secretVerifier: try verifier(of: secret, keyId: keyId, domain: Domain.secretVerifier),
            longSecretVerifier: try verifier(of: longSecretText, keyId: keyId, domain: Domain.longSecretVerifier),
            sealedLongSecret: xor(longSecret, try longSecretPad(secret: secret, keyId: keyId)),
            failures: 0,
            locked: false
        )
        let createdAt = now().timeIntervalSince1970
        try state.database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO key (keyid, key, secret_verifier, longsecret_verifier, sealed_longsecret,
                                     failures, locked, created_at)
                    VALUES (?, ?, ?, ?, ?, 0, 0, ?)
                    """,
                arguments: [
                    keyId, record.key, record.secretVerifier, record.longSecretVerifier, record.sealedLongSecret,
                    createdAt,
                ]
            )
        }
        entries.withLockedValue { $0[keyId] = Entry(record) }
        return KeyGrant(keyId: keyId, key: key, longSecret: longSecretText)
    }

    /// Checks `credential` against the key and counts the attempt.
    ///
    /// A locked key answers `.locked` before any check. A right credential resets the count; a wrong
    /// one (secret or long secret) adds one, and the third in a row locks the key for good.
    /// - Throws: when a changed count cannot be stored; the count then stays as it was.
    func key(keyId: String, credential: KeyCredential) throws -> Answer {
        guard let entry = try entry(for: keyId) else { return .missing }
        return try entry.record.withLockedValue { record in
            if record.locked { return .locked }
            if let grant = try grant(record, for: credential) {
                if record.failures != 0 {
                    try store(keyId: keyId, failures: 0, locked: false)
                    record.failures = 0
                }
                return .granted(grant)
            }
            let failures = record.failures + 1
            let locked = failures >= Self.attemptsBeforeLock
            try store(keyId: keyId, failures: failures, locked: locked)
            record.failures = failures
            record.locked = locked
            return .wrongSecret(failures: failures)
        }
    }

    private func grant(_ record: Record, for credential: KeyCredential) throws -> KeyGrant? {
        switch credential {
        case .secret(let secret):
            let candidate = try verifier(of: secret, keyId: record.keyId, domain: Domain.secretVerifier)
            guard ConstantTime.equal(candidate, record.secretVerifier) else { return nil }
            let pad = try longSecretPad(secret: secret, keyId: record.keyId)
            let longSecret = Base64URL.encode(xor(record.sealedLongSecret, pad))
            return KeyGrant(keyId: record.keyId, key: record.key, longSecret: longSecret)
        case .longSecret(let longSecret):
            let candidate = try verifier(of: longSecret, keyId: record.keyId, domain: Domain.longSecretVerifier)
            guard ConstantTime.equal(candidate, record.longSecretVerifier) else { return nil }
            return KeyGrant(keyId: record.keyId, key: record.key, longSecret: longSecret)
        }
    }

    private func store(keyId: String, failures: Int, locked: Bool) throws {
        try state.database.write { db in
            try db.execute(
                sql: "UPDATE key SET failures = ?, locked = ? WHERE keyid = ?",
                arguments: [failures, locked, keyId]
            )
        }
    }

    /// The cache entry for `keyId`, read from SQLite on first use; `nil` for an unknown key.
    private func entry(for keyId: String) throws -> Entry? {
        if let entry = entries.withLockedValue({ $0[keyId] }) { return entry }
        let row = try state.database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM key WHERE keyid = ?", arguments: [keyId])
        }
        guard let row else { return nil }
        let loaded = Entry(
            Record(
                keyId: row["keyid"],
                key: row["key"],
                secretVerifier: row["secret_verifier"],
                longSecretVerifier: row["longsecret_verifier"],
                sealedLongSecret: row["sealed_longsecret"],
                failures: row["failures"],
                locked: row["locked"]
            )
        )
        // Another request may have loaded the key meanwhile: the first entry wins, so that every
        // change to a key goes through one lock.
        return entries.withLockedValue { entries in
            if let existing = entries[keyId] { return existing }
            entries[keyId] = loaded
            return loaded
        }
    }

    private enum Domain {
        static let secretVerifier = "keyservice-mock/v1/secret-verifier"
        static let longSecretVerifier = "keyservice-mock/v1/longsecret-verifier"
        static let longSecretPad = "keyservice-mock/v1/longsecret-pad"
    }

    /// A keyed hash of a secret with the server pepper; bound to the key id, so equal secrets
    /// on two keys give unrelated verifiers.
    private func verifier(of secret: String, keyId: String, domain: String) throws -> Data {
        try BLAKE2b.keyedHash(key: state.pepper, domain: domain, message: Data((keyId + "\u{0}" + secret).utf8))
            .copyToData()
    }

    /// The pad that seals the long secret: only a caller with the right secret can unseal it, so the
    /// database never holds the long secret in a form that can be read back.
    private func longSecretPad(secret: String, keyId: String) throws -> Data {
        try BLAKE2b.keyedHash(
            key: state.pepper,
            domain: Domain.longSecretPad,
            message: Data((keyId + "\u{0}" + secret).utf8)
        )
        .copyToData()
    }

    private func xor(_ lhs: Data, _ rhs: Data) -> Data {
        Data(zip(lhs, rhs).map { $0 ^ $1 })
    }

    /// One key as stored.
    private struct Record: Sendable {
        let keyId: String
        let key: Data
        let secretVerifier: Data
        let longSecretVerifier: Data
        let sealedLongSecret: Data
        var failures: Int
        var locked: Bool
    }

    /// A key's record behind its own lock.
    private final class Entry: Sendable {
        let record: NIOLockedValueBox<Record>

        init(_ record: Record) {
            self.record = NIOLockedValueBox(record)
        }
    }
}
