import Foundation
import GRDB

/// Protocol 2's steps on SQLite: each one job of the write queue, so its read, check and write are one transaction
/// that no other write interleaves.
extension SQLiteKeyStorage {
    /// Reads the key, asks `check` and sets the sealed auth key in one job of the write queue; when `check` throws
    /// nothing is written and the error is thrown.
    public func enroll(
        keyId: String,
        check: @escaping @Sendable (StoredKey) throws -> Result<[UInt8], EnrollmentRefusal>
    ) async throws -> KeyEnrollment {
        try await writes.submit { db -> Result<KeyEnrollment, any Error> in
            guard let row = try Self.read(db, keyId: keyId) else { return .success(.missing) }
            let sealedAuthKey: [UInt8]
            do {
                switch try check(row) {
                case .success(let sealed): sealedAuthKey = sealed
                case .failure(let refusal): return .success(.refused(refusal))
                }
            } catch {
                // Answered as an error without failing the batch: nothing was written.
                return .failure(error)
            }
            try db.execute(
                sql: """
                    UPDATE key SET sealed_auth_key = ?
                    WHERE keyid = ? AND protocol = 2 AND sealed_auth_key IS NULL AND pepper_version = ?
                    """,
                arguments: [Data(sealedAuthKey), keyId, row.verifiers.pepperVersion]
            )
            return .success(db.changesCount == 1 ? .enrolled : .refused(.alreadyEnrolled))
        }.get()
    }

    /// Reads the key, asks `check` and, for the current nonce, resets the count and moves to `nextNonce` in one job of
    /// the write queue; when `check` throws nothing is written and the error is thrown.
    public func confirm(
        keyId: String,
        nextNonce: [UInt8],
        check: @escaping @Sendable (StoredKey) throws -> ProofMatch
    ) async throws -> KeyConfirmation {
        try await writes.submit { db -> Result<KeyConfirmation, any Error> in
            guard let row = try Self.read(db, keyId: keyId) else { return .success(.missing) }
            let match: ProofMatch
            do {
                match = try check(row)
            } catch {
                return .failure(error)
            }
            if match == .currentNonce, let nonce = row.nonce {
                try db.execute(
                    sql: """
                        UPDATE key SET failures = 0, locked = 0, previous_nonce = nonce, nonce = ?
                        WHERE keyid = ? AND nonce = ?
                        """,
                    arguments: [Data(nextNonce), keyId, Data(nonce)]
                )
                // In this transaction nothing else wrote the row since it was read: the nonce is the one checked.
                guard db.changesCount == 1 else {
                    return .failure(KeyServiceError("the key's nonce changed while it was confirmed"))
                }
            }
            return .success(.checked(row, match))
        }.get()
    }

    /// The key `keyId` as stored, nil when there is none.
    private static func read(_ db: Database, keyId: String) throws -> StoredKey? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(columns) FROM key WHERE keyid = ?"),
            arguments: [keyId]
        ).map { storedKey(keyId, $0) }
    }
}
