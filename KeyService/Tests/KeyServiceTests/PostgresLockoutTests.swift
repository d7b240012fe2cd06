import Foundation
import KeyServiceCore
import KeyServicePostgres
import Testing
import VaultTestSupport

/// The lockout on PostgreSQL, engine level: concurrent attempts on one key from four instances (four pools) on one
/// database, counted by the database alone.
@Suite("PostgreSQL lockout across instances", .tags(.alone), .enabled(inTier: .alone), .serialized)
struct PostgresLockoutTests {
    @Test(
        "concurrent attempts on one key over four instances: exactly three counted, the rest locked",
        arguments: [200, 1_000]
    )
    func hammer(attempts: Int) async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(4, on: server) { storages in
                let row = StorageFixture.key()
                #expect(try await storages[0].insert(row, limits: StorageFixture.noLimits) == .inserted)
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for attempt in 0..<attempts {
                        let storage = storages[attempt % storages.count]
                        group.addTask {
                            switch try await storage.countAttempt(keyId: row.keyId, lockAt: 3) {
                            case .counted(_, let failures): "counted \(failures)"
                            case .locked: "locked"
                            case .missing: "missing"
                            }
                        }
                    }
                    var outcomes: [String: Int] = [:]
                    for try await outcome in group { outcomes[outcome, default: 0] += 1 }
                    return outcomes
                }
                #expect(outcomes == ["counted 1": 1, "counted 2": 1, "counted 3": 1, "locked": attempts - 3])
                #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(row.keyId)'") == "3|t")
            }
        }
    }

    @Test(
        "concurrent wrong credentials through countAndCheck over four instances: exactly three counted",
        arguments: [200, 1_000]
    )
    func hammerChecked(attempts: Int) async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(4, on: server) { storages in
                let row = StorageFixture.key()
                #expect(try await storages[0].insert(row, limits: StorageFixture.noLimits) == .inserted)
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for attempt in 0..<attempts {
                        let storage = storages[attempt % storages.count]
                        group.addTask {
                            let checked = try await storage.countAndCheck(keyId: row.keyId, lockAt: 3) { _ in false }
                            return checked.attempt.isLocked ? "locked" : "wrong \(checked.attempt.failures ?? -1)"
                        }
                    }
                    var outcomes: [String: Int] = [:]
                    for try await outcome in group { outcomes[outcome, default: 0] += 1 }
                    return outcomes
                }
                #expect(outcomes == ["wrong 1": 1, "wrong 2": 1, "wrong 3": 1, "locked": attempts - 3])
                #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(row.keyId)'") == "3|t")
            }
        }
    }

    @Test("concurrent right credentials over four instances never see the key locked, and leave no count")
    func concurrentRightAttempts() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(4, on: server) { storages in
                let row = StorageFixture.key()
                _ = try await storages[0].insert(row, limits: StorageFixture.noLimits)
                let rights = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for attempt in 0..<200 {
                        let storage = storages[attempt % storages.count]
                        group.addTask {
                            let checked = try await storage.countAndCheck(keyId: row.keyId, lockAt: 3) { _ in true }
                            return checked.isRight && checked.attempt.failures == 1 && checked.resetFailure == nil
                        }
                    }
                    var rights = 0
                    for try await right in group where right { rights += 1 }
                    return rights
                }
                #expect(rights == 200)
                #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(row.keyId)'") == "0|f")
            }
        }
    }

    @Test("the counted attempt returns the row as stored")
    func countedRow() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(1, on: server) { storages in
                let row = StorageFixture.key(client: "192.0.2.7", pepper: 4)
                #expect(try await storages[0].insert(row, limits: StorageFixture.noLimits) == .inserted)
                guard
                    case .counted(let stored, let failures) = try await storages[0].countAttempt(
                        keyId: row.keyId,
                        lockAt: 3
                    )
                else {
                    Issue.record("the first attempt was not counted")
                    return
                }
                #expect(failures == 1)
                #expect(stored.key == row.key)
                #expect(stored.verifiers == row.verifiers)
                #expect(stored.createdAt == row.createdAt)
                #expect(stored.createdBy == "192.0.2.7")
                #expect(try await storages[0].countAttempt(keyId: "no-such-key", lockAt: 3).isMissing)
            }
        }
    }

    @Test("a reset takes the count back only when no later attempt was counted")
    func conditionalReset() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(2, on: server) { storages in
                let row = StorageFixture.key()
                _ = try await storages[0].insert(row, limits: StorageFixture.noLimits)
                _ = try await storages[0].countAttempt(keyId: row.keyId, lockAt: 3)  // 1: the right secret, say
                _ = try await storages[1].countAttempt(keyId: row.keyId, lockAt: 3)  // 2: a wrong one meanwhile
                try await storages[0].resetFailures(keyId: row.keyId, ifFailures: 1)  // late: must not erase 2
                #expect(try await storages[1].failures(keyId: row.keyId) == 2)
                try await storages[1].resetFailures(keyId: row.keyId, ifFailures: 2)
                #expect(try await storages[0].failures(keyId: row.keyId) == 0)
                // The third attempt locks; a right third attempt's reset unlocks what its own count locked.
                for _ in 0..<3 { _ = try await storages[0].countAttempt(keyId: row.keyId, lockAt: 3) }
                #expect(try await storages[1].countAttempt(keyId: row.keyId, lockAt: 3).isLocked)
                try await storages[0].resetFailures(keyId: row.keyId, ifFailures: 3)
                #expect(try await storages[1].countAttempt(keyId: row.keyId, lockAt: 3).failures == 1)
                #expect(try await storages[0].failures(keyId: "no-such-key") == nil)
            }
        }
    }

    @Test("pepper versions per row: replaced only from the version named, counted by version")
    func pepperVersions() async throws {
        try await PostgresServer.with { server in
            try await StorageFixture.withStorages(1, on: server) { storages in
                let storage = storages[0]
                let old = StorageFixture.key(pepper: 1)
                let other = StorageFixture.key(pepper: 1)
                _ = try await storage.insert(old, limits: StorageFixture.noLimits)
                _ = try await storage.insert(other, limits: StorageFixture.noLimits)
                #expect(try await storage.keysByPepperVersion() == [1: 2])
                var moved = StorageFixture.key(pepper: 2).verifiers
                try await storage.replaceVerifiers(keyId: old.keyId, fromVersion: 1, with: moved)
                #expect(try await storage.keysByPepperVersion() == [1: 1, 2: 1])
                // A second rotation racing the first finds the row moved on, and leaves it.
                let stale = moved
                moved = StorageFixture.key(pepper: 2).verifiers
                try await storage.replaceVerifiers(keyId: old.keyId, fromVersion: 1, with: moved)
                guard case .counted(let stored, _) = try await storage.countAttempt(keyId: old.keyId, lockAt: 3) else {
                    Issue.record("the attempt was not counted")
                    return
                }
                #expect(stored.verifiers == stale)
            }
        }
    }
}

extension CountedAttempt {
    var isLocked: Bool {
        if case .locked = self { return true }
        return false
    }

    var isMissing: Bool {
        if case .missing = self { return true }
        return false
    }

    /// The count after this attempt, nil when it was not counted.
    var failures: Int? {
        if case .counted(_, let failures) = self { return failures }
        return nil
    }
}
