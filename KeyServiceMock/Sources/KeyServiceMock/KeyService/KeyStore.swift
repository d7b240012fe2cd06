import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto

/// The keys, their verifiers and their failure counts, in SQLite.
///
/// An attempt is counted before its credential is checked, by one `UPDATE ... RETURNING` that adds one to
/// the key's count and reads the key back; only a right credential then takes the count back to zero. So a
/// count that cannot be written means the credential is never checked (the server fails closed), and a
/// crash between the two writes leaves the attempt counted. Attempts on one key are serialized by that
/// key's lock stripe (increment, check, reset as one step, so "in a row" is exact under concurrency);
/// attempts on other keys go on in parallel, sharing only SQLite's single writer.
final class KeyStore: Sendable {
    /// Consecutive wrong secrets that lock a key.
    static let attemptsBeforeLock = 3

    /// The outcome of a `key` request.
    enum Answer: Sendable {
        /// The right credential; `resetFailure` is why its count could not be taken back to zero, if it could not.
        case granted(KeyGrant, resetFailure: (any Error)?)
        /// The credential was wrong; `failures` in a row now, the key is locked at ``attemptsBeforeLock``.
        case wrongSecret(failures: Int)
        case locked
        case missing
    }

    /// The attempt could not be counted, so its credential was not checked; the caller answers 503.
    struct AttemptNotCounted: Error, CustomStringConvertible {
        let underlying: any Error
        var description: String { "\(underlying)" }
    }

    /// Why `createkey` was refused.
    enum CreationRefusal: Error, Sendable {
        /// This client holds ``KeyLimits/perClient`` keys already.
        case clientLimit(Int)
        /// The store holds ``KeyLimits/total`` keys already.
        case totalLimit(Int)
    }

    /// How many keys a client, and everyone together, may hold. Keys are never evicted: a locked key must
    /// keep answering 204.
    struct KeyLimits: Sendable {
        let perClient: Int
        let total: Int
    }

    private let state: StateStore
    private let now: @Sendable () -> Date
    private let limits: KeyLimits
    private let counts: NIOLockedValueBox<KeyCounts>
    /// Lock stripes: a key's attempts hold the stripe its id hashes to. A fixed set, so a flood of
    /// made-up key ids allocates nothing.
    private let stripes: [NIOLock] = (0..<64).map { _ in NIOLock() }
    init(
        state: StateStore,
        limits: KeyLimits,
        now: @escaping @Sendable () -> Date
    ) throws {
        self.state = state
        self.limits = limits
        self.now = now
        let rows = try state.database.read { db in
            try Row.fetchAll(db, sql: "SELECT created_by, COUNT(*) AS keys FROM key GROUP BY created_by")
        }
        var counts = KeyCounts()
        for row in rows {
            let keys: Int = row["keys"]
            counts.perClient[row["created_by"]] = keys
            counts.total += keys
        }
        self.counts = NIOLockedValueBox(counts)
    }

    /// Creates a key for `secret` on behalf of `client`: 32 random bytes under a new UUID, and a new long secret.
    /// - Throws: ``CreationRefusal`` when a limit is reached; any other error when the key cannot be
    ///   stored (the caller answers 500).
    func createKey(secret: String, client: ClientAddress) throws -> KeyGrant {
        try counts.withLockedValue { counts in
            guard counts.total < limits.total else { throw CreationRefusal.totalLimit(limits.total) }
            guard counts.perClient[client.description, default: 0] < limits.perClient else {
                throw CreationRefusal.clientLimit(limits.perClient)
            }
            // Reserved before the insert, so concurrent creations cannot pass a limit together.
            counts.total += 1
            counts.perClient[client.description, default: 0] += 1
        }
        do {
            return try insertKey(secret: secret, client: client)
        } catch {
            counts.withLockedValue { counts in
                counts.total -= 1
                counts.perClient[client.description, default: 1] -= 1
                if counts.perClient[client.description] == 0 { counts.perClient[client.description] = nil }
            }
            throw error
        }
    }

    private func insertKey(secret: String, client: ClientAddress) throws -> KeyGrant {
        let keyId = UUID().uuidString.lowercased()
        let key = SecureRandom.bytes(count: 32)
        let longSecret = SecureRandom.bytes(count: 32)
        let longSecretText = Base64URL.encode(longSecret)
        let secretVerifier = try verifier(of: secret, keyId: keyId, domain: Domain.secretVerifier)
        let longSecretVerifier = try verifier(of: longSecretText, keyId: keyId, domain: Domain.longSecretVerifier)
        let sealedLongSecret = xor(longSecret, try longSecretPad(secret: secret, keyId: keyId))
        let createdAt = now().timeIntervalSince1970
        try state.database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO key (keyid, key, secret_verifier, longsecret_verifier, sealed_longsecret,
                                     failures, locked, created_at, created_by)
                    VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?)
                    """,
                arguments: [
                    keyId, key, secretVerifier, longSecretVerifier, sealedLongSecret, createdAt, client.description,
                ]
            )
        }
        return KeyGrant(keyId: keyId, key: key, longSecret: longSecretText)
    }

    /// Counts the attempt, then checks `credential` against the key.
    ///
    /// A locked key answers `.locked` and an unknown one `.missing`, neither counted. Otherwise the attempt
    /// is counted first (the third in a row locks the key, whatever the check then says); a right credential
    /// then resets the count (and the lock its own count set), a wrong one leaves it counted.
    /// - Throws: ``AttemptNotCounted`` when the count cannot be written: the credential was not checked.
    func key(keyId: String, credential: KeyCredential) throws -> Answer {
        try stripe(for: keyId).withLock {
            let row: Row?
            do {
                row = try state.database.write { db in
                    try Row.fetchOne(
                        db,
                        sql: """
                            UPDATE key SET failures = failures + 1, locked = (failures + 1 >= ?)
                            WHERE keyid = ? AND locked = 0
                            RETURNING key, secret_verifier, longsecret_verifier, sealed_longsecret, failures
                            """,
                        arguments: [Self.attemptsBeforeLock, keyId]
                    )
                }
            } catch {
                throw AttemptNotCounted(underlying: error)
            }
            guard let row else {
                let locked = try state.database.read { db in
                    try Bool.fetchOne(db, sql: "SELECT locked FROM key WHERE keyid = ?", arguments: [keyId])
                }
                return locked == nil ? .missing : .locked
            }
            let record = Record(
                keyId: keyId,
                key: row["key"],
                secretVerifier: row["secret_verifier"],
                longSecretVerifier: row["longsecret_verifier"],
                sealedLongSecret: row["sealed_longsecret"]
            )
            guard let grant = try grant(record, for: credential) else {
                return .wrongSecret(failures: row["failures"])
            }
            do {
                try state.database.write { db in
                    try db.execute(sql: "UPDATE key SET failures = 0, locked = 0 WHERE keyid = ?", arguments: [keyId])
                }
            } catch {
                // The right credential still gets its key: a count left too high only locks sooner.
                return .granted(grant, resetFailure: error)
            }
            return .granted(grant, resetFailure: nil)
        }
    }

    /// The wrong credentials in a row counted against `keyId` (nil for a key that does not exist).
    func failures(keyId: String) throws -> Int? {
        try stripe(for: keyId).withLock {
            try state.database.read { db in
                try Int.fetchOne(db, sql: "SELECT failures FROM key WHERE keyid = ?", arguments: [keyId])
            }
        }
    }

    private func stripe(for keyId: String) -> NIOLock {
        stripes[Int(UInt(bitPattern: keyId.hashValue) % UInt(stripes.count))]
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

    /// What proves a credential for one key, as stored.
    private struct Record: Sendable {
        let keyId: String
        let key: Data
        let secretVerifier: Data
        let longSecretVerifier: Data
        let sealedLongSecret: Data
    }

    /// How many keys exist, in all and per creating client.
    private struct KeyCounts: Sendable {
        var total = 0
        var perClient: [String: Int] = [:]
    }
}
