import Foundation
import KeyServiceCore
import KeyServicePostgres
import Testing

/// Protocol 2's storage steps, engine level, on both engines with four storages on one database (four instances on
/// PostgreSQL, four pools on one SQLite file): `enroll` sets the auth key once, `confirm` resets for a nonce once,
/// and a counted row comes back with its protocol 2 columns as stored.
@Suite("Protocol 2 storage steps on SQLite and PostgreSQL", .serialized)
struct ProtocolV2StorageTests {
    enum Engine: String, CaseIterable, Sendable {
        case sqlite
        case postgres
    }

    @Test("a protocol 2 row is stored and counted back as it was written", arguments: Engine.allCases)
    func countedRow(engine: Engine) async throws {
        try await Self.withStorages(engine) { storages in
            let row = Self.key()
            #expect(try await storages[0].insert(row, limits: StorageFixture.noLimits) == .inserted)
            guard
                case .counted(let stored, let failures) = try await storages[1].countAttempt(
                    keyId: row.keyId,
                    lockAt: 3
                )
            else {
                Issue.record("the attempt was not counted")
                return
            }
            #expect(failures == 1)
            #expect(stored.protocolVersion == 2)
            #expect(stored.verifiers == row.verifiers)
            #expect(stored.nonce == row.nonce)
            #expect(stored.previousNonce == nil)
            #expect(stored.key == row.key)
            // A protocol 1 row keeps the new columns empty.
            let old = StorageFixture.key()
            _ = try await storages[0].insert(old, limits: StorageFixture.noLimits)
            guard case .counted(let counted, _) = try await storages[2].countAttempt(keyId: old.keyId, lockAt: 3) else {
                Issue.record("the attempt was not counted")
                return
            }
            #expect(counted.protocolVersion == 1)
            #expect(counted.nonce == nil)
            #expect(counted.verifiers == old.verifiers)
        }
    }

    @Test(
        "simultaneous enrolls of one key over four storages: exactly one sets the auth key",
        arguments: Engine.allCases
    )
    func enrollOnce(engine: Engine) async throws {
        try await Self.withStorages(engine) { storages in
            let row = Self.key(enrolled: false)
            _ = try await storages[0].insert(row, limits: StorageFixture.noLimits)
            let outcomes = try await withThrowingTaskGroup(of: KeyEnrollment.self) { group in
                for attempt in 0..<40 {
                    let storage = storages[attempt % storages.count]
                    group.addTask {
                        try await storage.enroll(keyId: row.keyId) { stored in
                            stored.verifiers.sealedAuthKey == nil
                                ? .success(Self.random(32)) : .failure(.alreadyEnrolled)
                        }
                    }
                }
                var outcomes: [KeyEnrollment] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == .enrolled }.count == 1)
            #expect(outcomes.filter { $0 == .refused(.alreadyEnrolled) }.count == 39)
            let missing = try await storages[0].enroll(keyId: "no-such-key") { _ in .success(Self.random(32)) }
            #expect(missing == .missing)
        }
    }

    @Test("simultaneous right confirms of one nonce over four storages: exactly one resets", arguments: Engine.allCases)
    func confirmOnce(engine: Engine) async throws {
        try await Self.withStorages(engine) { storages in
            let row = Self.key()
            let nonce = try #require(row.nonce)
            _ = try await storages[0].insert(row, limits: StorageFixture.noLimits)
            for _ in 0..<3 { _ = try await storages[1].countAttempt(keyId: row.keyId, lockAt: 3) }
            let matches = try await withThrowingTaskGroup(of: ProofMatch?.self) { group in
                for attempt in 0..<40 {
                    let storage = storages[attempt % storages.count]
                    group.addTask {
                        let confirmation = try await storage.confirm(keyId: row.keyId, nextNonce: Self.random(32)) {
                            stored in
                            stored.nonce == nonce
                                ? .currentNonce : stored.previousNonce == nonce ? .previousNonce : .wrong
                        }
                        guard case .checked(_, let match) = confirmation else { return nil }
                        return match
                    }
                }
                var matches: [ProofMatch?] = []
                for try await match in group { matches.append(match) }
                return matches
            }
            #expect(matches.filter { $0 == .currentNonce }.count == 1)
            #expect(matches.filter { $0 == .previousNonce }.count == 39)
            // Reset and unlocked once; the nonce moved on, the checked one is now the previous one.
            guard
                case .counted(let after, let failures) = try await storages[2].countAttempt(keyId: row.keyId, lockAt: 3)
            else {
                Issue.record("the key is still locked")
                return
            }
            #expect(failures == 1)
            #expect(after.previousNonce == nonce)
            #expect(after.nonce != nonce)
            let missing = try await storages[0].confirm(keyId: "no-such-key", nextNonce: Self.random(32)) { _ in .wrong
            }
            guard case .missing = missing else {
                Issue.record("an unknown key was confirmed")
                return
            }
        }
    }

    /// A protocol 2 row with random bytes where the sealed values go (the engine never reads them).
    static func key(enrolled: Bool = true) -> StoredKey {
        StoredKey(
            keyId: UUID().uuidString.lowercased(),
            key: random(32),
            verifiers: KeyVerifiers(
                secretVerifier: [],
                longSecretVerifier: random(32),
                sealedLongSecret: random(32),
                pepperVersion: 1,
                sealedOPRFKey: random(32),
                sealedAuthKey: enrolled ? random(32) : nil
            ),
            createdAt: Date(timeIntervalSince1970: 1_800_000_000),
            createdBy: "127.0.0.1",
            protocolVersion: 2,
            nonce: random(32)
        )
    }

    static func random(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255) }
    }

    /// Runs `body` with four storages on one new database of `engine`.
    static func withStorages(_ engine: Engine, _ body: ([any KeyStorage]) async throws -> Void) async throws {
        switch engine {
        case .postgres:
            try await PostgresServer.with { server in
                try await StorageFixture.withStorages(4, on: server) { storages in try await body(storages) }
            }
        case .sqlite:
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("keys.sqlite").path
            let storages = try (0..<4).map { _ in try SQLiteKeyStorage.open(path: path, logger: StorageFixture.quiet) }
            defer { for storage in storages { try? storage.close() } }
            try await body(storages)
        }
    }
}
