import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs a statement whose rows are not wanted, to its end: the connection goes back to the pool only then.
    func run(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }

    /// Runs a query to its end and gives the first column of its first row, nil when it has no rows.
    func value<Value: PostgresDecodable & Sendable>(
        _ query: PostgresQuery,
        as type: Value.Type,
        logger: Logger
    ) async throws -> Value? {
        var first: Value?
        for try await value in try await self.query(query, logger: logger).decode(Value.self) where first == nil {
            first = value
        }
        return first
    }
}
