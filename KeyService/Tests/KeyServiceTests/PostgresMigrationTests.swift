import Foundation
import KeyServiceCore
import KeyServicePostgres
import Testing

/// The PostgreSQL schema's migrations: applied once each, whoever starts first, however many start at once.
@Suite("PostgreSQL migrations", .serialized)
struct PostgresMigrationTests {
    @Test("four instances migrating one new database at once apply each migration once")
    func concurrentMigrations() async throws {
        try await PostgresServer.with { server in
            let storages = (0..<4).map { _ in
                PostgresKeyStorage(configuration: server.configuration, logger: StorageFixture.quiet)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for storage in storages { group.addTask { try await storage.run() } }
                defer { group.cancelAll() }
                let applied = try await withThrowingTaskGroup(of: [Int].self) { migrations in
                    for storage in storages { migrations.addTask { try await storage.migrate() } }
                    var all: [Int] = []
                    for try await versions in migrations { all += versions }
                    return all
                }
                #expect(applied.sorted() == [1, 2, 3])
                // Again: nothing left to apply.
                #expect(try await storages[0].migrate() == [])
            }
            #expect(
                try await server.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations")
                    == "1,2,3"
            )
            #expect(try await server.psql("SELECT keys FROM key_total") == "0")
        }
    }

    @Test("a database migrated by a newer version is refused, not altered")
    func newerSchema() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(1, on: server) { _ in }
            _ = try await server.psql("INSERT INTO schema_migrations (version) VALUES (99)")
            let storage = PostgresKeyStorage(configuration: server.configuration, logger: StorageFixture.quiet)
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await storage.run() }
                defer { group.cancelAll() }
                let error = await #expect(throws: PostgresStorageError.self) { try await storage.migrate() }
                #expect(error?.kind == .migrationFailed)
            }
        }
    }
}
