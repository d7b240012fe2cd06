import Foundation
public import KeyServiceCore
import Logging
import PostgresNIO

/// Protocol 2's steps on PostgreSQL: each one transaction that reads the key `FOR UPDATE`, so attempts on one key
/// from every instance queue at its row lock, and the read, the check and the write are one step.
extension PostgresKeyStorage {
    /// Reads the key `FOR UPDATE`, asks `check` and sets the sealed auth key in one transaction; when `check` throws
    /// the transaction rolls back.
    public func enroll(
        keyId: String,
        check: @escaping @Sendable (StoredKey) throws -> Result<[UInt8], EnrollmentRefusal>
    ) async throws -> KeyEnrollment {
        try await call(doing: "enrolling a key") { client, logger in
            try await client.withTransaction(logger: logger) { connection -> KeyEnrollment in
                guard let row = try await Self.lockedRow(keyId: keyId, on: connection, logger: logger) else {
                    return .missing
                }
                let sealedAuthKey: [UInt8]
                switch try check(row) {
                case .success(let sealed): sealedAuthKey = sealed
                case .failure(let refusal): return .refused(refusal)
                }
                let enrolled = try await connection.value(
                    """
                    UPDATE key SET sealed_auth_key = \(Data(sealedAuthKey))
                    WHERE keyid = \(keyId) AND protocol = 2 AND sealed_auth_key IS NULL
                      AND pepper_version = \(row.verifiers.pepperVersion)
                    RETURNING keyid
                    """,
                    as: String.self,
                    logger: logger
                )
                return enrolled == nil ? .refused(.alreadyEnrolled) : .enrolled
            }
        }
    }

    /// Reads the key `FOR UPDATE`, asks `check` and, for the current nonce, resets the count and moves to `nextNonce`
    /// in one transaction; when `check` throws the transaction rolls back.
    public func confirm(
        keyId: String,
        nextNonce: [UInt8],
        check: @escaping @Sendable (StoredKey) throws -> ProofMatch
    ) async throws -> KeyConfirmation {
        try await call(doing: "confirming a key") { client, logger in
            try await client.withTransaction(logger: logger) { connection -> KeyConfirmation in
                guard let row = try await Self.lockedRow(keyId: keyId, on: connection, logger: logger) else {
                    return .missing
                }
                let match = try check(row)
                if match == .currentNonce, let nonce = row.nonce {
                    let reset = try await connection.value(
                        """
                        UPDATE key SET failures = 0, locked = false, previous_nonce = nonce, nonce = \(Data(nextNonce))
                        WHERE keyid = \(keyId) AND nonce = \(Data(nonce))
                        RETURNING keyid
                        """,
                        as: String.self,
                        logger: logger
                    )
                    // The row lock held since the read: the nonce is the one checked.
                    guard reset != nil else {
                        throw PostgresStorageError(.unexpectedRow, "the key's nonce changed while it was confirmed")
                    }
                }
                return .checked(row, match)
            }
        }
    }

    /// The key `keyId`, its row locked until the transaction ends; nil when there is none.
    private static func lockedRow(
        keyId: String,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> StoredKey? {
        let rows = try await connection.query(
            "SELECT \(unescaped: KeyColumns.selectList) FROM key WHERE keyid = \(keyId) FOR UPDATE",
            logger: logger
        )
        var found: KeyColumns?
        // Read to the end (one row at most), so the connection is free for its next statement at once.
        for try await columns in rows.decode(
            (Data?, Data?, Data?, Data?, Int?, Int?, Date?, String?, Int?, Data?, Data?, Data?, Data?).self
        ) where found == nil {
            found = KeyColumns(columns)
        }
        return try found?.storedKey(keyId: keyId)
    }
}
