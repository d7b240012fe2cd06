import Foundation
public import KeyServiceCore
public import Logging
import PostgresNIO
public import ServiceLifecycle

/// The key service's keys in PostgreSQL: any number of stateless instances on one database, the lockout exact
/// across them.
///
/// Each instance is one connection pool (postgres-nio's `PostgresClient`), which runs while ``run()`` runs: add
/// the storage to the server's `ServiceGroup`, or use ``withRunning(_:logger:_:)``. Call ``migrate()`` once the
/// pool runs and before serving.
///
/// Exactness comes from the database, never from this process: an attempt is counted by one autocommit
/// `UPDATE … RETURNING` (the row lock orders concurrent attempts on a key, across every instance; the commit is
/// durable before the answer, as `synchronous_commit` is left at its default), and a key is created in a
/// transaction that holds an advisory lock while it checks the limits and inserts. Every call has a deadline
/// (``PostgresStorageConfiguration/deadline``) and throws ``PostgresStorageError`` past it or on any failure:
/// the key service then answers 503 and checks no credential.
public final class PostgresKeyStorage: KeyStorage, Service {
    /// The advisory lock held while a key is created (an arbitrary constant of this schema: "keysvc\0c").
    static let creationLock: Int64 = 0x6b65_7973_7663_0063

    private let client: PostgresClient
    private let logger: Logger
    private let deadline: Duration
    private let migrationDeadline: Duration

    /// A storage on the database `configuration` names; it connects once ``run()`` runs.
    public init(configuration: PostgresStorageConfiguration, logger: Logger = Logger(label: "keyservice.postgres")) {
        self.client = PostgresClient(configuration: configuration.client, backgroundLogger: logger)
        self.logger = logger
        self.deadline = configuration.deadline
        self.migrationDeadline = configuration.migrationDeadline
    }

    /// Runs the connection pool until the task is cancelled or a graceful shutdown begins (ServiceLifecycle).
    public func run() async throws {
        await client.run()
    }

    /// Runs `body` with a storage on `configuration`'s database, its pool running and its schema migrated; the pool
    /// is closed when `body` ends.
    /// - Throws: ``PostgresStorageError`` when the schema cannot be migrated; whatever `body` throws.
    public static func withRunning<Result: Sendable>(
        _ configuration: PostgresStorageConfiguration,
        logger: Logger = Logger(label: "keyservice.postgres"),
        _ body: (PostgresKeyStorage) async throws -> Result
    ) async throws -> Result {
        let storage = PostgresKeyStorage(configuration: configuration, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await storage.run() }
            defer { group.cancelAll() }
            try await storage.migrate()
            return try await body(storage)
        }
    }

    /// Applies the schema migrations `configuration`'s database lacks, with a pool of its own that is closed before
    /// this returns: what a server does at start, before it serves.
    /// - Returns: the versions this call applied.
    /// - Throws: ``PostgresStorageError`` (``PostgresStorageError/Kind/migrationFailed``).
    @discardableResult
    public static func migrate(
        _ configuration: PostgresStorageConfiguration,
        logger: Logger = Logger(label: "keyservice.postgres")
    ) async throws -> [Int] {
        // Its pool's own notices (a lease asked for a moment before its run task starts) would only be noise at
        // every start: a migration that fails throws.
        var quiet = logger
        quiet.logLevel = .error
        let storage = PostgresKeyStorage(configuration: configuration, logger: quiet)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await storage.run() }
            defer { group.cancelAll() }
            return try await storage.migrate()
        }
    }

    /// Applies the schema migrations the database lacks (see `PostgresMigrations`): safe from any number of
    /// instances at once, each migration applied once. Under a deadline of its own, the call's deadline but at
    /// least a minute (``PostgresStorageConfiguration/migrationDeadline``): it may wait behind other instances'
    /// migrations, and each statement still has the call's deadline. Without one, a session the database ended
    /// between two of its statements would wait for good (postgres-nio 1.33 never answers a query written to a
    /// connection that has closed).
    /// - Returns: the versions this call applied.
    /// - Throws: ``PostgresStorageError`` (``PostgresStorageError/Kind/migrationFailed``).
    @discardableResult
    public func migrate() async throws -> [Int] {
        do {
            let migrationDeadline = migrationDeadline
            return try await call(doing: "migrating the schema", within: migrationDeadline) { client, logger in
                try await PostgresMigrations.apply(on: client, idleLimit: migrationDeadline, logger: logger)
            }
        } catch {
            let cause = PostgresStorageError.wrapping(error, doing: "migrating the schema")
            throw PostgresStorageError(.migrationFailed, "the schema could not be migrated: \(cause)")
        }
    }

    /// Checks the limits and inserts in one transaction under the creation advisory lock, so the limits hold across
    /// every instance; a `keyid` already taken is ``KeyInsertion/duplicateKeyId``.
    public func insert(_ row: StoredKey, limits: KeyLimits) async throws -> KeyInsertion {
        try await call(doing: "creating a key") { client, logger in
            try await client.withTransaction(logger: logger) { connection -> KeyInsertion in
                // One creation at a time across every instance: the counts read below cannot change before the
                // insert commits.
                try await connection.run("SELECT pg_advisory_xact_lock(\(Self.creationLock))", logger: logger)
                let total = try await connection.value("SELECT keys FROM key_total", as: Int.self, logger: logger) ?? 0
                guard total < limits.total else { return .totalLimit(limits.total) }
                let mine =
                    try await connection.value(
                        "SELECT count(*) FROM key WHERE created_by = \(row.createdBy)",
                        as: Int.self,
                        logger: logger
                    ) ?? 0
                guard mine < limits.perClient else { return .clientLimit(limits.perClient) }
                let inserted = try await connection.value(
                    """
                    INSERT INTO key (keyid, key, secret_verifier, longsecret_verifier, sealed_longsecret,
                                     pepper_version, failures, locked, created_at, created_by,
                                     protocol, sealed_oprf_key, sealed_auth_key, nonce, previous_nonce)
                    VALUES (\(row.keyId), \(Data(row.key)), \(Data(row.verifiers.secretVerifier)),
                            \(Data(row.verifiers.longSecretVerifier)), \(Data(row.verifiers.sealedLongSecret)),
                            \(row.verifiers.pepperVersion), 0, false, \(row.createdAt), \(row.createdBy),
                            \(row.protocolVersion), \(row.verifiers.sealedOPRFKey.map { Data($0) }),
                            \(row.verifiers.sealedAuthKey.map { Data($0) }), \(row.nonce.map { Data($0) }),
                            \(row.previousNonce.map { Data($0) }))
                    ON CONFLICT (keyid) DO NOTHING
                    RETURNING keyid
                    """,
                    as: String.self,
                    logger: logger
                )
                return inserted == nil ? .duplicateKeyId : .inserted
            }
        }
    }

    /// One autocommit `UPDATE ... RETURNING` that also tells a locked key from a missing one; durable before it
    /// returns.
    public func countAttempt(keyId: String, lockAt: Int) async throws -> CountedAttempt {
        try await call(doing: "counting an attempt") { client, logger in
            try await Self.attempt(
                keyId: keyId,
                from: try await client.query(Self.counting(keyId: keyId, lockAt: lockAt), logger: logger)
            )
        }
    }

    /// Counts, checks and resets in one transaction: the UPDATE's row lock holds the key until the commit, so
    /// attempts on it from every instance queue there and each sees the count the one before it left ("in a row"
    /// exactly, a right attempt's reset included). A wrong attempt's count is committed before this returns; if
    /// the process dies before the commit, nothing was answered and nothing was counted.
    public func countAndCheck(
        keyId: String,
        lockAt: Int,
        check: @escaping @Sendable (StoredKey) throws -> Bool
    ) async throws -> CheckedAttempt {
        try await call(doing: "counting an attempt") { client, logger in
            try await client.withTransaction(logger: logger) { connection -> CheckedAttempt in
                let attempt = try await Self.attempt(
                    keyId: keyId,
                    from: try await connection.query(Self.counting(keyId: keyId, lockAt: lockAt), logger: logger)
                )
                guard case .counted(let row, _) = attempt, try check(row) else {
                    return CheckedAttempt(attempt: attempt, isRight: false)
                }
                try await connection.run(
                    "UPDATE key SET failures = 0, locked = false WHERE keyid = \(keyId)",
                    logger: logger
                )
                return CheckedAttempt(attempt: attempt, isRight: true)
            }
        }
    }

    /// One statement that counts an attempt: the UPDATE takes the row lock, counts and reads the key back; when it
    /// counted nothing, the second branch tells a locked key (the row exists) from a missing one.
    private static func counting(keyId: String, lockAt: Int) -> PostgresQuery {
        """
        WITH counted AS (
            UPDATE key SET failures = failures + 1, locked = (failures + 1 >= \(lockAt))
            WHERE keyid = \(keyId) AND NOT locked
            RETURNING \(unescaped: KeyColumns.selectList)
        )
        SELECT true, \(unescaped: KeyColumns.selectList)
        FROM counted
        UNION ALL
        SELECT false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM key WHERE keyid = \(keyId) AND NOT EXISTS (SELECT 1 FROM counted)
        """
    }

    /// What ``counting(keyId:lockAt:)`` answered, read to its end.
    private static func attempt(keyId: String, from rows: PostgresRowSequence) async throws -> CountedAttempt {
        var found: (Bool, KeyColumns)?
        // Read to the end (one row at most), so the connection is free for its next statement at once.
        for try await (
            counted, key, secretVerifier, longSecretVerifier, sealed, pepper, failures, createdAt,
            createdBy, version, sealedOPRFKey, sealedAuthKey, nonce, previousNonce
        ) in rows.decode(
            (Bool, Data?, Data?, Data?, Data?, Int?, Int?, Date?, String?, Int?, Data?, Data?, Data?, Data?).self
        ) where found == nil {
            found = (
                counted,
                KeyColumns(
                    (
                        key, secretVerifier, longSecretVerifier, sealed, pepper, failures, createdAt, createdBy,
                        version, sealedOPRFKey, sealedAuthKey, nonce, previousNonce
                    )
                )
            )
        }
        guard let (counted, columns) = found else { return .missing }
        guard counted else { return .locked }
        guard let failures = columns.failures else {
            throw PostgresStorageError(.unexpectedRow, "a counted key came back with empty columns")
        }
        return .counted(try columns.storedKey(keyId: keyId), failures: failures)
    }

    /// One autocommit `UPDATE`, awaited: the count goes to zero only while it is still `failures`.
    public func resetFailures(keyId: String, ifFailures failures: Int) async throws {
        try await call(doing: "resetting a count") { client, logger in
            try await client.run(
                "UPDATE key SET failures = 0, locked = false WHERE keyid = \(keyId) AND failures = \(failures)",
                logger: logger
            )
        }
    }

    /// One conditional `UPDATE`; a key no longer on `fromVersion` is left as it is.
    public func replaceVerifiers(keyId: String, fromVersion: Int, with verifiers: KeyVerifiers) async throws {
        try await call(doing: "replacing a key's verifiers") { client, logger in
            try await client.run(
                """
                UPDATE key SET secret_verifier = \(Data(verifiers.secretVerifier)),
                               longsecret_verifier = \(Data(verifiers.longSecretVerifier)),
                               sealed_longsecret = \(Data(verifiers.sealedLongSecret)),
                               pepper_version = \(verifiers.pepperVersion),
                               sealed_oprf_key = \(verifiers.sealedOPRFKey.map { Data($0) }),
                               sealed_auth_key = \(verifiers.sealedAuthKey.map { Data($0) })
                WHERE keyid = \(keyId) AND pepper_version = \(fromVersion)
                  AND pepper_version < \(verifiers.pepperVersion)
                """,
                logger: logger
            )
        }
    }

    /// One read; nil for an unknown key.
    public func failures(keyId: String) async throws -> Int? {
        try await call(doing: "reading a count") { client, logger in
            try await client.value("SELECT failures FROM key WHERE keyid = \(keyId)", as: Int.self, logger: logger)
        }
    }

    /// One `GROUP BY` over the `key` table.
    public func keysByPepperVersion() async throws -> [Int: Int] {
        try await call(doing: "counting keys by pepper version") { client, logger in
            var counts: [Int: Int] = [:]
            let rows = try await client.query(
                "SELECT pepper_version, count(*) FROM key GROUP BY pepper_version",
                logger: logger
            )
            for try await (version, keys) in rows.decode((Int, Int).self) {
                counts[version] = keys
            }
            return counts
        }
    }

    /// Runs `SELECT 1` under the deadline; throws ``PostgresStorageError`` when the database does not answer.
    public func checkReady() async throws {
        try await call(doing: "checking the database") { client, logger in
            try await client.run("SELECT 1", logger: logger)
        }
    }

    /// Runs one storage step under `limit` (the deadline unless given), every failure turned into a
    /// ``PostgresStorageError``.
    func call<Result: Sendable>(
        doing step: String,
        within limit: Duration? = nil,
        _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> Result
    ) async throws -> Result {
        let client = client
        let logger = logger
        do {
            return try await withDeadline(limit ?? deadline, doing: step) { try await body(client, logger) }
        } catch {
            throw PostgresStorageError.wrapping(error, doing: step)
        }
    }
}
