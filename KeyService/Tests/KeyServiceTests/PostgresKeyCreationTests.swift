import Foundation
import KeyServiceCore
import KeyServicePostgres
import Testing

/// Key creation on PostgreSQL from several instances at once: the limits exact, a key id inserted once.
@Suite("PostgreSQL key creation across instances", .serialized)
struct PostgresKeyCreationTests {
    @Test("two instances racing to insert one key id: one inserted, one duplicate")
    func duplicateRace() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(2, on: server) { storages in
                for _ in 0..<20 {
                    let id = UUID().uuidString.lowercased()
                    async let first = storages[0].insert(StorageFixture.key(id: id), limits: StorageFixture.noLimits)
                    async let second = storages[1].insert(StorageFixture.key(id: id), limits: StorageFixture.noLimits)
                    let outcomes = try await [first, second]
                    #expect(outcomes.filter { $0 == .inserted }.count == 1)
                    #expect(outcomes.filter { $0 == .duplicateKeyId }.count == 1)
                }
                #expect(try await server.psql("SELECT count(*) FROM key") == "20")
            }
        }
    }

    @Test("the per-client limit is exact under concurrent creations from four instances")
    func perClientLimit() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(4, on: server) { storages in
                let limits = KeyLimits(perClient: 5, total: 1_000)
                let outcomes = try await insertConcurrently(60, over: storages, limits: limits) { _ in "198.51.100.1" }
                #expect(outcomes == ["inserted": 5, "clientLimit(5)": 55])
                #expect(try await server.psql("SELECT count(*) FROM key WHERE created_by = '198.51.100.1'") == "5")
            }
        }
    }

    @Test("the total limit is exact under concurrent creations from four instances and many clients")
    func totalLimit() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(4, on: server) { storages in
                let limits = KeyLimits(perClient: 3, total: 20)
                // 10 clients of up to 3 keys would make 30: the total stops them at 20.
                let outcomes = try await insertConcurrently(80, over: storages, limits: limits) {
                    "203.0.113.\($0 % 10)"
                }
                #expect(outcomes["inserted"] == 20)
                #expect(Set(outcomes.keys).isSubset(of: ["inserted", "totalLimit(20)", "clientLimit(3)"]))
                #expect(try await server.psql("SELECT count(*) FROM key") == "20")
                #expect(try await server.psql("SELECT keys FROM key_total") == "20")
                #expect(
                    try await server.psql("SELECT max(n) FROM (SELECT count(*) AS n FROM key GROUP BY created_by) c")
                        == "3"
                )
            }
        }
    }

    private func insertConcurrently(
        _ count: Int,
        over storages: [PostgresKeyStorage],
        limits: KeyLimits,
        client: @escaping @Sendable (Int) -> String
    ) async throws -> [String: Int] {
        // Each outcome by its name: `inserted`, `clientLimit(5)`, `totalLimit(20)`, `duplicateKeyId`.
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                let storage = storages[index % storages.count]
                group.addTask {
                    "\(try await storage.insert(StorageFixture.key(client: client(index)), limits: limits))"
                }
            }
            var outcomes: [String: Int] = [:]
            for try await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
    }
}
