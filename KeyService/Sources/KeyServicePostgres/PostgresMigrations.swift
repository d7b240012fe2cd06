import Logging
import PostgresNIO

/// The PostgreSQL schema, as numbered migrations: each is applied once, in order, and recorded in
/// `schema_migrations`. A released migration is never edited: a change is a new number.
///
/// Every instance applies what is missing at start, inside one transaction that first takes
/// ``lock`` (`pg_advisory_xact_lock`): two instances starting at once apply each migration once, the second
/// finding it recorded when the first commits.
enum PostgresMigrations {
    /// One version of the schema: its number and the statements that make it.
    struct Migration: Sendable {
        let version: Int
        let statements: [String]
    }

    /// The advisory lock held while migrating (an arbitrary constant of this schema: "keysvc\0m").
    static let lock: Int64 = 0x6b65_7973_7663_006d

    /// Every migration, in order.
    static let all: [Migration] = [
        Migration(
            version: 1,
            statements: [
                // The mock's SQLite `key` table, with the pepper version of each row's verifiers.
                """
                CREATE TABLE key (
                    keyid TEXT PRIMARY KEY,
                    key BYTEA NOT NULL,
                    secret_verifier BYTEA NOT NULL,
                    longsecret_verifier BYTEA NOT NULL,
                    sealed_longsecret BYTEA NOT NULL,
                    pepper_version INTEGER NOT NULL DEFAULT 1,
                    failures INTEGER NOT NULL DEFAULT 0,
                    locked BOOLEAN NOT NULL DEFAULT false,
                    created_at TIMESTAMPTZ NOT NULL,
                    created_by TEXT NOT NULL
                )
                """,
                "CREATE INDEX key_created_by ON key (created_by)",
                "CREATE INDEX key_pepper_version ON key (pepper_version)",
            ]
        ),
        Migration(
            version: 2,
            statements: [
                // The number of keys, kept by a trigger, so the total limit is checked without counting the table.
                """
                CREATE TABLE key_total (
                    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
                    keys BIGINT NOT NULL
                )
                """,
                "INSERT INTO key_total (keys) SELECT count(*) FROM key",
                """
                CREATE FUNCTION key_total_follow() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'INSERT' THEN
                        UPDATE key_total SET keys = keys + 1;
                    ELSE
                        UPDATE key_total SET keys = keys - 1;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER key_total_follow AFTER INSERT OR DELETE ON key
                FOR EACH ROW EXECUTE FUNCTION key_total_follow()
                """,
            ]
        ),
        Migration(
            version: 3,
            statements: [
                // Issue 27: protocol 2's columns; a protocol 1 key keeps them NULL.
                """
                ALTER TABLE key
                    ADD COLUMN protocol INTEGER NOT NULL DEFAULT 1,
                    ADD COLUMN sealed_oprf_key BYTEA,
                    ADD COLUMN sealed_auth_key BYTEA,
                    ADD COLUMN nonce BYTEA,
                    ADD COLUMN previous_nonce BYTEA
                """
            ]
        ),
    ]

    /// Applies the migrations `database` lacks, under the advisory lock, in one transaction. The transaction may
    /// idle between its statements for up to `idleLimit` (`SET LOCAL idle_in_transaction_session_timeout`), not
    /// the session's limit of one call's deadline: on a busy machine a migration waits for its turn between statements,
    /// and a session the database ends mid-migration is a start that fails.
    /// - Returns: the versions this call applied (empty when the schema was up to date).
    static func apply(on client: PostgresClient, idleLimit: Duration, logger: Logger) async throws -> [Int] {
        let idleMilliseconds = PostgresStorageConfiguration.milliseconds(idleLimit)
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.run(
                PostgresQuery(unsafeSQL: "SET LOCAL idle_in_transaction_session_timeout = \(idleMilliseconds)"),
                logger: logger
            )
            try await connection.run("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
            try await connection.run(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            var applied: Set<Int> = []
            for try await version in try await connection.query(
                "SELECT version FROM schema_migrations",
                logger: logger
            ).decode(Int.self) {
                applied.insert(version)
            }
            let known = all.map(\.version).max() ?? 0
            if let newest = applied.max(), newest > known {
                throw PostgresStorageError(
                    .migrationFailed,
                    "the database's schema is at version \(newest), newer than this keyservice knows (\(known)): "
                        + "run the newer keyservice, or restore a backup taken before it migrated"
                )
            }
            var done: [Int] = []
            for migration in all where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.run(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))",
                    logger: logger
                )
                done.append(migration.version)
            }
            return done
        }
    }
}
