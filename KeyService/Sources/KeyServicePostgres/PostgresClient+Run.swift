import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs a statement whose rows are not wanted, to its end: the connection goes back to the pool only then.
    func run(_ query: PostgresQuery, logger: Logger) async throws {
        try await self.query(query, logger: logger).drain()
    }

    /// Runs a query to its end and gives the first column of its first row, nil when it has no rows.
    func value<Value: PostgresDecodable & Sendable>(
        _ query: PostgresQuery,
        as type: Value.Type,
        logger: Logger
    ) async throws -> Value? {
        try await self.query(query, logger: logger).firstValue(as: Value.self)
    }
}
