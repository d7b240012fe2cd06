import Foundation
public import GRDB
public import Logging

/// The single-machine ``KeyStorage``: the `key` table in a SQLite database (WAL).
///
/// Every write goes through one queue that commits the writes waiting together (``SQLiteWriteQueue``): an attempt
/// is counted, read back, checked and (when right) reset in one job of one transaction, and answered once that
/// transaction is committed. Several processes may share the file: SQLite serialises their transactions.
public final class SQLiteKeyStorage: KeyStorage {
    private let database: any DatabaseWriter
    // Internal: protocol 2's steps (SQLiteKeyStorage+ProtocolV2) go through the same queue.
    let writes: SQLiteWriteQueue
    private let logger: Logger

    /// Key storage in `database`, whose `key` table is created or brought up to date first.
    ///
    /// The database may hold other tables (the mock keeps its identity provider's beside it).
    /// - Throws: when the schema cannot be applied.
    public init(database: any DatabaseWriter, logger: Logger = Logger(label: "keyservice.sqlite")) throws {
        try SQLiteKeyMigrations.apply(to: database)
        self.database = database
        writes = SQLiteWriteQueue(database: database)
        self.logger = logger
    }

    /// Opens (creating when missing) the SQLite database at `path` as key storage: WAL, `synchronous = FULL` (every
    /// commit is synced to the disk before its answers go out, so a counted attempt survives `kill -9` and a power
    /// loss alike; the group commit pays one sync for all the attempts waiting), `secure_delete` on.
    /// - Throws: when the file cannot be opened or its schema applied.
    public static func open(
        path: String,
        logger: Logger = Logger(label: "keyservice.sqlite")
    ) throws
        -> SQLiteKeyStorage
    {
        try makePrivate(path)
        var configuration = GRDB.Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        configuration.busyMode = .timeout(5)
        return try SQLiteKeyStorage(database: DatabasePool(path: path, configuration: configuration), logger: logger)
    }

    /// The rows hold the keys themselves: the file is this user's alone (0600), made so before SQLite opens it, and
    /// its `-wal` and `-shm` files, which SQLite creates with the database file's mode, follow. A file with a looser
    /// mode (made by an earlier version, or copied in) is narrowed to 0600.
    private static func makePrivate(_ path: String) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw KeyServiceError("cannot create the database file \(path)")
            }
        }
        for file in [path, path + "-wal", path + "-shm"] where manager.fileExists(atPath: file) {
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }

    /// Checks the limits and inserts in one job of the write queue, one transaction, so the limits hold for every
    /// process on the file.
    public func insert(_ row: StoredKey, limits: KeyLimits) async throws -> KeyInsertion {
        try await writes.submit { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM key") ?? 0
            guard total < limits.total else { return .totalLimit(limits.total) }
            let mine =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM key WHERE created_by = ?", arguments: [row.createdBy])
                ?? 0
            guard mine < limits.perClient else { return .clientLimit(limits.perClient) }
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM key WHERE keyid = ?", arguments: [row.keyId]) == nil else {
                return .duplicateKeyId
            }
            try db.execute(
                sql: """
                    INSERT INTO key (keyid, key, secret_verifier, longsecret_verifier, sealed_longsecret,
                                     pepper_version, failures, locked, created_at, created_by,
                                     protocol, sealed_oprf_key, sealed_auth_key, nonce, previous_nonce)
                    VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    row.keyId, Data(row.key), Data(row.verifiers.secretVerifier),
                    Data(row.verifiers.longSecretVerifier), Data(row.verifiers.sealedLongSecret),
                    row.verifiers.pepperVersion, row.createdAt.timeIntervalSince1970, row.createdBy,
                    row.protocolVersion, row.verifiers.sealedOPRFKey.map { Data($0) },
                    row.verifiers.sealedAuthKey.map { Data($0) }, row.nonce.map { Data($0) },
                    row.previousNonce.map { Data($0) },
                ]
            )
            return .inserted
        }
    }

    /// One `UPDATE ... RETURNING` in a job of the write queue, answered once its transaction is committed.
    public func countAttempt(keyId: String, lockAt: Int) async throws -> CountedAttempt {
        try await writes.submit { db in try Self.count(db, keyId: keyId, lockAt: lockAt) }
    }

    /// The count as one `UPDATE ... RETURNING`; a locked or missing key is told apart by a read in the same
    /// transaction.
    private static func count(_ db: Database, keyId: String, lockAt: Int) throws -> CountedAttempt {
        let counted = try Row.fetchOne(
            db.cachedStatement(sql: countStatement),
            arguments: [lockAt, keyId]
        )
        guard let counted else {
            let locked = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT locked FROM key WHERE keyid = ?"),
                arguments: [keyId]
            )
            return locked == nil ? .missing : .locked
        }
        return .counted(storedKey(keyId, counted), failures: counted[5])
    }

    /// The columns a counted or read key comes back with, in the order ``storedKey(_:_:)`` reads them.
    static let columns = """
        key, secret_verifier, longsecret_verifier, sealed_longsecret, pepper_version, failures, created_at, created_by,
        protocol, sealed_oprf_key, sealed_auth_key, nonce, previous_nonce
        """

    /// The count, built once: the statement cache is keyed by its text.
    private static let countStatement = """
        UPDATE key SET failures = failures + 1, locked = (failures + 1 >= ?)
        WHERE keyid = ? AND locked = 0
        RETURNING \(columns)
        """

    /// The key in a row of ``columns``.
    static func storedKey(_ keyId: String, _ row: Row) -> StoredKey {
        // By position, in the order of the column list: a lookup by name compares every column's name.
        StoredKey(
            keyId: keyId,
            key: [UInt8](row[0] as Data),
            verifiers: KeyVerifiers(
                secretVerifier: [UInt8](row[1] as Data),
                longSecretVerifier: [UInt8](row[2] as Data),
                sealedLongSecret: [UInt8](row[3] as Data),
                pepperVersion: row[4],
                sealedOPRFKey: (row[9] as Data?).map { [UInt8]($0) },
                sealedAuthKey: (row[10] as Data?).map { [UInt8]($0) }
            ),
            createdAt: Date(timeIntervalSince1970: row[6]),
            createdBy: row[7],
            protocolVersion: row[8],
            nonce: (row[11] as Data?).map { [UInt8]($0) },
            previousNonce: (row[12] as Data?).map { [UInt8]($0) }
        )
    }

    /// Counts, checks and resets in one job of the write queue: one transaction with every attempt waiting, so
    /// attempts on one key are in a row exactly, and a right one costs no write of its own.
    ///
    /// When `check` throws, the job takes its own count back in the same transaction and answers the error: the
    /// batch it shares still commits (a failed batch is retried one job at a time, a commit each).
    public func countAndCheck(
        keyId: String,
        lockAt: Int,
        check: @escaping @Sendable (StoredKey) throws -> Bool
    ) async throws -> CheckedAttempt {
        try await writes.submit { db -> Result<CheckedAttempt, any Error> in
            let attempt = try Self.count(db, keyId: keyId, lockAt: lockAt)
            guard case .counted(let row, _) = attempt else {
                return .success(CheckedAttempt(attempt: attempt, isRight: false))
            }
            let isRight: Bool
            do {
                isRight = try check(row)
            } catch {
                // The count matched an unlocked row: one less, unlocked, is the row as it was.
                try db.cachedStatement(sql: "UPDATE key SET failures = failures - 1, locked = 0 WHERE keyid = ?")
                    .execute(arguments: [keyId])
                return .failure(error)
            }
            guard isRight else { return .success(CheckedAttempt(attempt: attempt, isRight: false)) }
            try db.cachedStatement(sql: "UPDATE key SET failures = 0, locked = 0 WHERE keyid = ?")
                .execute(arguments: [keyId])
            return .success(CheckedAttempt(attempt: attempt, isRight: true))
        }.get()
    }

    /// Queued, not awaited: it commits with a later batch, and when it fails the error is logged and the attempt
    /// stays counted (the safe side).
    public func resetFailures(keyId: String, ifFailures failures: Int) async throws {
        let logger = logger
        writes.enqueue { db in
            try db.execute(
                sql: "UPDATE key SET failures = 0, locked = 0 WHERE keyid = ? AND failures = ?",
                arguments: [keyId, failures]
            )
        } onFailure: { error in
            // The safe side: the attempt stays counted, and the key locks sooner.
            logger.error(
                "a right attempt's count could not be reset: it stays counted",
                metadata: ["keyid": "\(keyId)", "error": "\(error)"]
            )
        }
    }

    /// One conditional `UPDATE` in a job of the write queue; a key no longer on `fromVersion` is left as it is.
    public func replaceVerifiers(keyId: String, fromVersion: Int, with verifiers: KeyVerifiers) async throws {
        try await writes.submit { db in
            try db.execute(
                sql: """
                    UPDATE key SET secret_verifier = ?, longsecret_verifier = ?, sealed_longsecret = ?,
                                   pepper_version = ?, sealed_oprf_key = ?, sealed_auth_key = ?
                    WHERE keyid = ? AND pepper_version = ? AND pepper_version < ?
                    """,
                arguments: [
                    Data(verifiers.secretVerifier), Data(verifiers.longSecretVerifier),
                    Data(verifiers.sealedLongSecret), verifiers.pepperVersion,
                    verifiers.sealedOPRFKey.map { Data($0) }, verifiers.sealedAuthKey.map { Data($0) }, keyId,
                    fromVersion, verifiers.pepperVersion,
                ]
            )
        }
    }

    /// Read through the write queue, so after every write queued before it (a right attempt's reset included).
    public func failures(keyId: String) async throws -> Int? {
        try await writes.submit { db in
            try Int.fetchOne(db, sql: "SELECT failures FROM key WHERE keyid = ?", arguments: [keyId])
        }
    }

    /// A read beside the write queue: keys whose insert is still queued are not counted yet.
    public func keysByPepperVersion() async throws -> [Int: Int] {
        try await database.read { db in
            var counts: [Int: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT pepper_version, COUNT(*) AS keys FROM key GROUP BY 1") {
                counts[row["pepper_version"]] = row["keys"]
            }
            return counts
        }
    }

    /// Reads the schema's migrations table; throws when the database cannot be read.
    public func checkReady() async throws {
        _ = try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM schema_migrations") }
    }

    /// Returns once every write queued so far (a right attempt's reset included) is committed or has failed.
    public func finishWrites() async {
        _ = try? await writes.submit { _ in () }
    }

    /// Closes the database (a pool's connections); later calls fail. Call ``finishWrites()`` first.
    public func close() throws {
        if let pool = database as? DatabasePool { try pool.close() }
    }
}
