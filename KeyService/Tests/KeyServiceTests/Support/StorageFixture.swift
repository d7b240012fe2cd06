import Foundation
import KeyServiceCore
import KeyServicePostgres
import Logging

/// Rows and storages for the engine-level tests.
enum StorageFixture {
    /// A key row with random bytes where the verifiers go (the engine never reads them), created by `client`.
    static func key(
        id: String = UUID().uuidString.lowercased(),
        client: String = "127.0.0.1",
        pepper: Int = 1
    )
        -> StoredKey
    {
        StoredKey(
            keyId: id,
            key: random(32),
            verifiers: KeyVerifiers(
                secretVerifier: random(32),
                longSecretVerifier: random(32),
                sealedLongSecret: random(32),
                pepperVersion: pepper
            ),
            createdAt: Date(timeIntervalSince1970: 1_800_000_000),
            createdBy: client
        )
    }

    /// A logger that prints nothing: postgres-nio logs every failed connection attempt at info while a test has
    /// stopped the database on purpose.
    static let quiet = Logger(label: "keyservice.postgres.test") { _ in SwiftLogNoOpLogHandler() }

    /// Limits no test reaches.
    static let noLimits = KeyLimits(perClient: 1_000_000, total: 1_000_000)

    /// Runs `body` with `count` storages on `server`'s database, each its own pool (as separate instances are),
    /// all running and migrated; each call fails after `deadline`.
    static func withStorages<Result: Sendable>(
        _ count: Int,
        on server: PostgresServer,
        deadline: Duration = .seconds(60),
        _ body: ([PostgresKeyStorage]) async throws -> Result
    ) async throws -> Result {
        var configuration = server.configuration
        configuration.deadline = deadline
        let storages = (0..<count).map { _ in PostgresKeyStorage(configuration: configuration, logger: quiet) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for storage in storages { group.addTask { try await storage.run() } }
            defer { group.cancelAll() }
            for storage in storages { try await storage.migrate() }
            return try await body(storages)
        }
    }

    private static func random(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255) }
    }
}
