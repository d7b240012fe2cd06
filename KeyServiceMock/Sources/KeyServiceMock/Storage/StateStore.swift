import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto
import VaultPOSIX

/// Where the server's state lives: a SQLite database in the state directory (or in memory), two secret
/// files beside it (the pepper that keys every stored verifier and token-id hash, and the signing key's
/// seed), and an advisory lock that keeps a second server out.
///
/// The secrets live in their own files, apart from the database, so a copy of the database alone can
/// neither test a guess against a verifier nor sign a token, nor tell which token ids it holds.
final class StateStore: Sendable {
    let database: any DatabaseWriter
    let pepper: SecureBytes
    /// The Ed25519 seed of the identity provider's signing key.
    let signingSeed: SecureBytes
    private let lockDescriptor: Int32?
    private let isClosed = NIOLockedValueBox(false)

    /// What a token-id hash is of: each kind of id gets its own domain, so equal values never collide.
    enum TokenIdKind: String, Sendable {
        case session = "keyservice-mock/v2/session-id"
        case refreshToken = "keyservice-mock/v2/refresh-token-id"
        case authorizationCode = "keyservice-mock/v2/authorization-code"
        case accessToken = "keyservice-mock/v2/access-token-id"
        case opaqueAccessToken = "keyservice-mock/v2/smart-access-token"
        case ehrLaunch = "keyservice-mock/v2/smart-ehr-launch"
        case clientSecret = "keyservice-mock/v2/registered-client-secret"
        case registrationAccessToken = "keyservice-mock/v2/registration-access-token"
    }

    private init(database: any DatabaseWriter, pepper: SecureBytes, signingSeed: SecureBytes, lockDescriptor: Int32?) {
        self.database = database
        self.pepper = pepper
        self.signingSeed = signingSeed
        self.lockDescriptor = lockDescriptor
    }

    /// The keyed BLAKE2b hash of a token id under the pepper: what the state keeps instead of the id.
    func hash(_ id: String, as kind: TokenIdKind) -> Data {
        Self.hash(id, as: kind, pepper: pepper)
    }

    private static func hash(_ id: String, as kind: TokenIdKind, pepper: SecureBytes) -> Data {
        do {
            return try BLAKE2b.keyedHash(key: pepper, domain: kind.rawValue, message: Data(id.utf8)).copyToData()
        } catch {
            // BLAKE2b refuses only key and output lengths: the pepper is checked to be 32 bytes when loaded.
            preconditionFailure("BLAKE2b refused a \(pepper.count)-byte pepper: \(error)")
        }
    }

    /// Opens (creating when missing) the state in `directory`, or a fresh in-memory state for `nil`.
    ///
    /// An existing directory must be 0700 and owned by this user; its pepper and signing key must be
    /// readable and whole. Neither is ever replaced: a new pepper would make every key unusable.
    /// - Throws: ``StateError`` saying what is wrong and what to do.
    static func open(directory: URL?) throws -> StateStore {
        guard let directory else {
            let pepper = SecureBytes.random(count: secretLength)
            let database = try DatabaseQueue()
            try migrator(pepper: pepper, seedFile: nil).migrate(database)
            return StateStore(
                database: database,
                pepper: pepper,
                signingSeed: .random(count: secretLength),
                lockDescriptor: nil
            )
        }
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        try StateDirectory.checkPermissions(directory)
        let lockDescriptor = try lock(directory.appendingPathComponent("lock"))
        do {
            let databaseURL = directory.appendingPathComponent("state.sqlite")
            let pepperFile = SecretFile(url: directory.appendingPathComponent("pepper"), name: "pepper")
            let seedFile = SecretFile(url: directory.appendingPathComponent("signing-key"), name: "signing key")
            let databaseExists = FileManager.default.fileExists(atPath: databaseURL.path)
            // Without its pepper an existing database is useless: a new one would lock every key.
            let pepper = try pepperFile.load(creatingIfMissing: !databaseExists)
            // A new state gets its signing key before its database, so a database never exists without one.
            let newSeed = databaseExists ? nil : try seedFile.load(creatingIfMissing: true)
            var configuration = GRDB.Configuration()
            // WAL with synchronous=NORMAL: a commit is in the log before the answer goes out, so it
            // survives kill -9 of this process (only a power loss could drop the newest commits).
            // secure_delete: a replaced token-id hash or a migrated secret is overwritten, not left in a free page.
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
            configuration.busyMode = .timeout(5)
            let database = try DatabasePool(path: databaseURL.path, configuration: configuration)
            let migrator = migrator(pepper: pepper, seedFile: seedFile)
            let applied = try database.read { try migrator.appliedIdentifiers($0) }
            try migrator.migrate(database)
            if databaseExists, !applied.contains("v2") {
                // The previous version kept the seed and clear token ids in the database: leave no copy of
                // them in the log either.
                try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
            // Created only where the migration just found none; a seed lost later is an error, not replaced.
            let signingSeed = try newSeed ?? seedFile.load(creatingIfMissing: !applied.contains("v2"))
            return StateStore(
                database: database,
                pepper: pepper,
                signingSeed: signingSeed,
                lockDescriptor: lockDescriptor
            )
        } catch {
            close(lockDescriptor)
            throw error
        }
    }

    /// Closes the database and releases the directory lock; later calls do nothing.
    func close() {
        let wasClosed = isClosed.withLockedValue { isClosed in
            defer { isClosed = true }
            return isClosed
        }
        guard !wasClosed else { return }
        if let pool = database as? DatabasePool {
            try? pool.close()
        }
        if let lockDescriptor {
            Self.close(lockDescriptor)
        }
    }

    /// The length of the pepper and of the signing seed.
    static let secretLength = 32

    /// v1 is the schema of the first version, kept as it was; v2 moves the signing seed out to its
    /// file, stores token ids as keyed hashes, and records who created each key.
    private static func migrator(pepper: SecureBytes, seedFile: SecretFile?) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE key (
                        keyid TEXT PRIMARY KEY NOT NULL,
                        key BLOB NOT NULL,
                        secret_verifier BLOB NOT NULL,
                        longsecret_verifier BLOB NOT NULL,
                        sealed_longsecret BLOB NOT NULL,
                        failures INTEGER NOT NULL DEFAULT 0,
                        locked INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE signing_key (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        seed BLOB NOT NULL
                    );
                    CREATE TABLE refresh_family (
                        id TEXT PRIMARY KEY NOT NULL,
                        subject TEXT NOT NULL,
                        username TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        login_provider TEXT NOT NULL,
                        auth_time REAL NOT NULL,
                        current_jti TEXT NOT NULL,
                        revoked INTEGER NOT NULL DEFAULT 0
                    );
                    """
            )
        }
        migrator.registerMigration("v2") { db in
            if let seed = try Data.fetchOne(db, sql: "SELECT seed FROM signing_key WHERE id = 1"), let seedFile {
                // Written (and synced) before the table goes: a crash in between leaves both, never neither.
                try seedFile.adopt(seed)
            }
            try db.execute(sql: "DROP TABLE signing_key")
            try db.execute(
                sql: """
                    CREATE TABLE session (
                        id_hash BLOB PRIMARY KEY NOT NULL,
                        subject TEXT NOT NULL,
                        username TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        login_provider TEXT NOT NULL,
                        auth_time REAL NOT NULL,
                        refresh_token_hash BLOB NOT NULL,
                        revoked INTEGER NOT NULL DEFAULT 0
                    )
                    """
            )
            for row in try Row.fetchAll(db, sql: "SELECT * FROM refresh_family") {
                try db.execute(
                    sql: """
                        INSERT INTO session (id_hash, subject, username, client_id, scope, login_provider, auth_time,
                                             refresh_token_hash, revoked)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        hash(row["id"], as: .session, pepper: pepper), row["subject"], row["username"],
                        row["client_id"], row["scope"], row["login_provider"], row["auth_time"],
                        hash(row["current_jti"], as: .refreshToken, pepper: pepper), row["revoked"],
                    ]
                )
            }
            try db.execute(sql: "DROP TABLE refresh_family")
            try db.execute(sql: "ALTER TABLE key ADD COLUMN created_by TEXT NOT NULL DEFAULT ''")
        }
        return migrator
    }

    private static func lock(_ url: URL) throws -> Int32 {
        guard let descriptor = lockExclusively(url.path) else {
            throw StateError(
                "another keyservice-mock is using the state directory \(url.deletingLastPathComponent().path)"
            )
        }
        return descriptor
    }

    private static func close(_ descriptor: Int32) {
        unlock(descriptor)
    }
}

/// Opens `path` and takes an exclusive advisory lock on it; `nil` when another process holds it.
/// The kernel drops the lock when the process ends, kill -9 included.
private func lockExclusively(_ path: String) -> Int32? {
    let descriptor = FileLock.open(path)
    guard descriptor >= 0 else { return nil }
    guard FileLock.tryExclusive(descriptor) == .acquired else {
        close(descriptor)
        return nil
    }
    return descriptor
}

private func unlock(_ descriptor: Int32) {
    FileLock.unlock(descriptor)
    close(descriptor)
}
