import GRDB
import NIOConcurrencyHelpers

/// The one writer of a SQLite key store: it takes every write waiting, runs them in order in one transaction, and
/// answers each caller only once that transaction is committed (group commit).
///
/// Under load the attempts that arrive while one transaction commits share the next one, so a commit (a WAL append)
/// is paid once per batch rather than once per attempt, and each attempt is still on disk before its answer. If a
/// batch fails, nothing of it is kept and each write is tried again alone, so one failing write fails only its own
/// caller. Writes on one key keep their order: a reset queued before an attempt is applied before it.
final class SQLiteWriteQueue: Sendable {
    /// One write: `run` does it inside the batch's transaction and returns what answers its caller after the
    /// commit; `fail` answers the caller when it or its transaction failed. `run` may be called twice (the batch,
    /// then alone), so it changes nothing outside the database.
    private struct Job: Sendable {
        let run: @Sendable (Database) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct Pending: Sendable {
        var jobs: [Job] = []
        var draining = false
    }

    /// The most writes one transaction takes: every caller in a batch waits for its commit, so a flood of attempts
    /// is answered in steady batches rather than all at the end of one long transaction.
    private static let largestBatch = 64

    private let database: any DatabaseWriter
    // A pthread mutex (NIOLockedValueBox), not Synchronization.Mutex: ThreadSanitizer sees the order a pthread
    // mutex makes, and on Linux it does not see Mutex's, so `make proof-races` reported every enqueue as a race.
    private let pending = NIOLockedValueBox(Pending())

    init(database: any DatabaseWriter) {
        self.database = database
    }

    /// Runs `work` in the next batch and returns its result once the batch is committed.
    func submit<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(
                Job(
                    run: { db in
                        let value = try work(db)
                        return { continuation.resume(returning: value) }
                    },
                    fail: { continuation.resume(throwing: $0) }
                )
            )
        }
    }

    /// Queues `work` for the next batch without waiting for it; `onFailure` hears if it could not be committed.
    func enqueue(
        _ work: @escaping @Sendable (Database) throws -> Void,
        onFailure: @escaping @Sendable (any Error) -> Void
    ) {
        enqueue(
            Job(
                run: { db in
                    try work(db)
                    return {}
                },
                fail: onFailure
            )
        )
    }

    private func enqueue(_ job: Job) {
        let start = pending.withLockedValue { pending in
            pending.jobs.append(job)
            defer { pending.draining = true }
            return !pending.draining
        }
        if start {
            Task { await drain() }
        }
    }

    // A task, not a dispatch queue of its own calling GRDB's synchronous API: that one (tried for throughput) made
    // the 1,000-attempt lockout hammer under ThreadSanitizer answer 278 of 1,000 clients only after their 30 s, the
    // three 401s among them (`make proof-races` at ac89f07); with the task it answers every one.
    private func drain() async {
        while true {
            let batch = pending.withLockedValue { pending in
                let batch = Array(pending.jobs.prefix(Self.largestBatch))
                pending.jobs.removeFirst(batch.count)
                if batch.isEmpty { pending.draining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            await commit(batch)
        }
    }

    private func commit(_ batch: [Job]) async {
        do {
            let answers = try await transaction { db in try batch.map { try $0.run(db) } }
            for answer in answers { answer() }
        } catch {
            guard batch.count > 1 else {
                batch.first?.fail(error)
                return
            }
            for job in batch {
                do {
                    try await transaction { db in try job.run(db) }()
                } catch {
                    job.fail(error)
                }
            }
        }
    }

    /// Runs `body` in one immediate transaction, committed before it returns.
    private func transaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE TRANSACTION")
            do {
                let result = try body(db)
                try db.execute(sql: "COMMIT TRANSACTION")
                return result
            } catch {
                if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK TRANSACTION") }
                throw error
            }
        }
    }
}
