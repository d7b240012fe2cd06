/// Runs `body`, but throws ``PostgresStorageError/Kind/unreachable`` when it has not finished within `limit`.
///
/// postgres-nio's pool keeps a request waiting while it retries a database that is down (for a minute before its
/// circuit breaker trips): the key service must answer 503 long before that. The body is cancelled at the deadline;
/// a statement the database had already committed stays committed (a count too high, the safe side).
func withDeadline<Result: Sendable>(
    _ limit: Duration,
    doing step: String,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw PostgresStorageError(
                .unreachable,
                "the PostgreSQL database did not answer within \(limit) while \(step): check that it runs and is reachable"
            )
        }
        return result
    }
}
