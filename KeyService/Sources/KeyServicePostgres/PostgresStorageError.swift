import PostgresNIO

/// Why the PostgreSQL storage could not do what it was asked; the message says what to check.
///
/// It never holds a secret: not the database password, not a bound value of a statement, not a row. A PostgreSQL
/// error is reduced to its kind and SQLSTATE code.
public struct PostgresStorageError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a caller can act on it.
    public enum Kind: Sendable, Equatable {
        /// The `--database` URL cannot be used.
        case invalidConfiguration
        /// The database could not be reached, or did not answer within the deadline.
        case unreachable
        /// The database answered with an error.
        case databaseError
        /// The schema's migrations could not be applied.
        case migrationFailed
        /// A row did not have the shape this version expects (a newer or damaged schema).
        case unexpectedRow
    }

    /// What went wrong.
    public let kind: Kind
    /// One sentence: what happened and what to check.
    public let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// `error` from postgres-nio (or the deadline) as a storage error, `doing` naming the step (`counting an attempt`).
    static func wrapping(_ error: any Error, doing step: String) -> PostgresStorageError {
        if let known = error as? PostgresStorageError { return known }
        if let database = error as? PSQLError {
            if let state = database.serverInfo?[.sqlState] {
                let message = "PostgreSQL refused \(step) (SQLSTATE \(state))"
                return PostgresStorageError(.databaseError, message)
            }
            return PostgresStorageError(
                .unreachable,
                "the PostgreSQL database could not be reached while \(step) (\(database.code)): "
                    + "check that it runs and that the --database URL names it"
            )
        }
        if error is PostgresDecodingError {
            return PostgresStorageError(
                .unexpectedRow,
                "a row read while \(step) does not have the shape this version expects: check the schema's migrations"
            )
        }
        return PostgresStorageError(.unreachable, "the PostgreSQL database failed while \(step): \(type(of: error))")
    }
}
