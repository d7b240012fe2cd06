import GRDB

/// The SQLite schema of the key table, as numbered steps recorded in `schema_migrations(version)`.
///
/// Step 1 is the table as the mock made it (so it finds a mock's state as it is), step 2 adds the pepper version,
/// step 3 protocol 2's columns.
/// Steps run in one immediate transaction: a second process starting at once waits for the first, then finds them
/// applied.
enum SQLiteKeyMigrations {
    /// The steps, version 1 first. Append only: a step that has run anywhere never changes.
    static let steps: [String] = [
        """
        CREATE TABLE IF NOT EXISTS key (
            keyid TEXT PRIMARY KEY NOT NULL,
            key BLOB NOT NULL,
            secret_verifier BLOB NOT NULL,
            longsecret_verifier BLOB NOT NULL,
            sealed_longsecret BLOB NOT NULL,
            failures INTEGER NOT NULL DEFAULT 0,
            locked INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            created_by TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX IF NOT EXISTS key_created_by ON key (created_by);
        """,
        "ALTER TABLE key ADD COLUMN pepper_version INTEGER NOT NULL DEFAULT 1",
        // Issue 27: protocol 2's columns; a protocol 1 key keeps them NULL.
        """
        ALTER TABLE key ADD COLUMN protocol INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE key ADD COLUMN sealed_oprf_key BLOB;
        ALTER TABLE key ADD COLUMN sealed_auth_key BLOB;
        ALTER TABLE key ADD COLUMN nonce BLOB;
        ALTER TABLE key ADD COLUMN previous_nonce BLOB;
        """,
    ]

    /// Applies the steps `database` has not yet recorded.
    static func apply(to database: any DatabaseWriter) throws {
        try database.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try db.execute(
                    sql: "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY NOT NULL)"
                )
                let applied = Set(try Int.fetchAll(db, sql: "SELECT version FROM schema_migrations"))
                for (index, step) in steps.enumerated() where !applied.contains(index + 1) {
                    try db.execute(sql: step)
                    try db.execute(sql: "INSERT INTO schema_migrations (version) VALUES (?)", arguments: [index + 1])
                }
                return .commit
            }
        }
    }
}
