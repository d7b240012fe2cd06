/// Runs `body`, but throws ``PostgresStorageError/Kind/unreachable`` when it has not finished within `limit`.
///
/// postgres-nio's pool keeps a request waiting while it retries a database that is down (for a minute before its
/// circuit breaker trips), and a statement on a connection that stalls in the network answers no cancellation: the
/// key service must answer 503 long before either ends. So `body` runs in a task of its own, which is cancelled at
/// the deadline and not waited for. What it does after the deadline is never answered: a statement the database
/// commits late stays committed (a count too high, the safe side; a right secret's reset, which its caller earned).
/// The database ends such a statement itself too (`statement_timeout`, see ``PostgresStorageConfiguration``).
func withDeadline<Result: Sendable>(
    _ limit: Duration,
    doing step: String,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = DeadlineRace<Result>()
    let work = Task {
        do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
    }
    let timer = Task {
        // Cancelled when the work settles the race first; the finish below is then a no-op.
        try? await Task.sleep(for: limit)
        race.finish(
            .failure(
                PostgresStorageError(
                    .unreachable,
                    "the PostgreSQL database did not answer within \(limit) while \(step): "
                        + "check that it runs and is reachable"
                )
            )
        )
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await withTaskCancellationHandler {
        try await race.value()
    } onCancel: {
        work.cancel()
    }
}
