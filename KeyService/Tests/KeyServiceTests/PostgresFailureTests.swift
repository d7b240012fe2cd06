import Foundation
import KeyServiceCore
import KeyServicePostgres
import Testing

/// The PostgreSQL engine when the database goes away and comes back: it fails closed, and what it wrote stays.
@Suite("PostgreSQL storage failures and restarts", .serialized)
struct PostgresFailureTests {
    @Test("the database stopped: counting an attempt throws, never answers counted")
    func databaseStopped() async throws {
        try await PostgresServer.with { server in
            // A short deadline: while the database is down, postgres-nio's pool would retry for a minute.
            try await StorageFixture.withStorages(1, on: server, deadline: .seconds(3)) { storages in
                let storage = storages[0]
                let row = StorageFixture.key()
                _ = try await storage.insert(row, limits: StorageFixture.noLimits)
                #expect(try await storage.countAttempt(keyId: row.keyId, lockAt: 3).failures == 1)
                await server.stop()
                for _ in 0..<3 {
                    await #expect(throws: PostgresStorageError.self) {
                        try await storage.countAttempt(keyId: row.keyId, lockAt: 3)
                    }
                }
                await #expect(throws: PostgresStorageError.self) { try await storage.checkReady() }
                await #expect(throws: PostgresStorageError.self) {
                    try await storage.insert(StorageFixture.key(), limits: StorageFixture.noLimits)
                }
                // Back up: the same pool reconnects, and nothing was counted while it was down.
                try await server.start()
                try await waitUntilReady(storage)
                #expect(try await storage.countAttempt(keyId: row.keyId, lockAt: 3).failures == 2)
            }
        }
    }

    @Test("a locked key stays locked across a database restart and a new instance")
    func lockSurvivesRestart() async throws {
        try await PostgresServer.with { server in
            let row = StorageFixture.key()
            try await StorageFixture.withStorages(2, on: server) { storages in
                _ = try await storages[0].insert(row, limits: StorageFixture.noLimits)
                for attempt in 0..<3 {
                    _ = try await storages[attempt % 2].countAttempt(keyId: row.keyId, lockAt: 3)
                }
                #expect(try await storages[1].countAttempt(keyId: row.keyId, lockAt: 3).isLocked)
            }
            try await server.restart()
            try await StorageFixture.withStorages(1, on: server) { storages in
                let attempt = try await storages[0].countAttempt(keyId: row.keyId, lockAt: 3)
                #expect(attempt.isLocked)
                #expect(try await storages[0].failures(keyId: row.keyId) == 3)
            }
            #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(row.keyId)'") == "3|t")
        }
    }

    @Test("a database URL is read without showing its password")
    func configurationURL() throws {
        let configuration = try PostgresStorageConfiguration(
            url: "postgres://keys:s3cr%40t@db.example:6432/vault?sslmode=require",
            environment: [:]
        )
        #expect(configuration.host == "db.example")
        #expect(configuration.port == 6432)
        #expect(configuration.username == "keys")
        #expect(configuration.password == "s3cr@t")
        #expect(configuration.database == "vault")
        #expect(configuration.tls == .require)
        #expect(!configuration.description.contains("s3cr"))
        let fromEnvironment = try PostgresStorageConfiguration(
            url: "postgresql://keys@127.0.0.1/vault",
            environment: ["PGPASSWORD": "from-env"]
        )
        #expect(fromEnvironment.password == "from-env")
        #expect(fromEnvironment.port == 5432)
        #expect(fromEnvironment.tls == .prefer)
        // Without sslmode, a database off loopback is reached over verified TLS only; one on loopback may be plain.
        for (host, expected) in [
            ("db.example", PostgresStorageConfiguration.TLSMode.require), ("10.0.0.5", .require),
            ("[2001:db8::1]", .require), ("127.0.0.1", .prefer), ("127.9.9.9", .prefer), ("localhost", .prefer),
            ("[::1]", .prefer),
        ] {
            let configuration = try PostgresStorageConfiguration(url: "postgres://keys@\(host)/vault", environment: [:])
            #expect(configuration.tls == expected, "host \(host)")
        }
        for bad in [
            "mysql://a@b/c", "postgres://b/c", "postgres://a@b/", "postgres://a@b/c?sslmode=maybe", "not a url",
        ] {
            #expect(throws: PostgresStorageError.self) { try PostgresStorageConfiguration(url: bad, environment: [:]) }
        }
    }

    /// Waits (at most 30 s) until the storage answers again after the database came back.
    private func waitUntilReady(_ storage: PostgresKeyStorage) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try await storage.checkReady()
                return
            } catch {
                if ContinuousClock.now > deadline { throw error }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
