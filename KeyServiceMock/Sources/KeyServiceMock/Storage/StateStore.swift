import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the server's state lives: a SQLite database in the state directory (or in memory), the
/// pepper that keys every stored verifier, and an advisory lock that keeps a second server out.
///
/// The pepper lives in its own file beside the database, so a copy of the database alone cannot
/// test a guess against a verifier.
final class StateStore: Sendable {
    let database: any DatabaseWriter
    let pepper: SecureBytes
    private let lockDescriptor: Int32?
    private let isClosed = NIOLockedValueBox(false)

    private init(database: any DatabaseWriter, pepper: SecureBytes, lockDescriptor: Int32?) {
        self.database = database
        self.pepper = pepper
        self.lockDescriptor = lockDescriptor
    }

    /// Opens (creating when missing) the state in `directory`, or a fresh in-memory state for `nil`.
    static func open(directory: URL?) throws -> StateStore {
        guard let directory else {
            let database = try DatabaseQueue()
            try migrator.migrate(database)
            return StateStore(database: database, pepper: .random(count: 32), lockDescriptor: nil)
        }
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let lockDescriptor = try lock(directory.appendingPathComponent("lock"))
        do {
            let pepper = try loadOrCreatePepper(directory.appendingPathComponent("pepper"))
            var configuration = GRDB.Configuration()
            // WAL with synchronous=NORMAL: a commit is in the log before the answer goes out, so it
            // survives kill -9 of this process (only a power loss could drop the newest commits).
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            configuration.busyMode = .timeout(5)
            let database = try DatabasePool(
                path: directory.appendingPathComponent("state.sqlite").path,
                configuration: configuration
            )
            try migrator.migrate(database)
            return StateStore(database: database, pepper: pepper, lockDescriptor: lockDescriptor)
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

    private static var migrator: DatabaseMigrator {
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

    private static func loadOrCreatePepper(_ url: URL) throws -> SecureBytes {
        if let data = try? Data(contentsOf: url) {
            guard data.count == 32 else {
                throw StateError("the pepper file \(url.path) is not 32 bytes: the state directory is damaged")
            }
            return SecureBytes(data)
        }
        let pepper = SecureBytes.random(count: 32)
        let temporary = url.appendingPathExtension("tmp")
        // The directory is 0700, so the file is never readable by others, even before its mode is set.
        guard
            FileManager.default.createFile(
                atPath: temporary.path,
                contents: pepper.copyToData(),
                attributes: [.posixPermissions: 0o600]
            )
        else {
            throw StateError("cannot write the pepper file \(temporary.path)")
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.synchronize()
        try handle.close()
        guard rename(temporary.path, url.path) == 0 else {
            throw StateError("cannot write the pepper file \(url.path): errno \(errno)")
        }
        return pepper
    }
}

/// Opens `path` and takes an exclusive advisory lock on it; `nil` when another process holds it.
/// The kernel drops the lock when the process ends, kill -9 included.
private func lockExclusively(_ path: String) -> Int32? {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return nil }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
        close(descriptor)
        return nil
    }
    return descriptor
}

private func unlock(_ descriptor: Int32) {
    flock(descriptor, LOCK_UN)
    close(descriptor)
}
