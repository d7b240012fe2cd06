import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs a statement whose rows are not wanted, to its end, before the next statement on this connection.
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
