import Synchronization

/// The first of a storage call's outcomes, its own or the deadline's, handed to the one caller waiting for it.
///
/// The call runs in a task of its own, so a caller past its deadline does not wait for a statement that does not
/// answer its cancellation (a connection stalled in the network): ``finish(_:)`` settles the race once, later
/// outcomes are dropped.
final class DeadlineRace<Result: Sendable>: Sendable {
    private enum State {
        case running
        case waiting(CheckedContinuation<Result, any Error>)
        case finished(Swift.Result<Result, any Error>)
        case delivered
    }

    private let state = Mutex(State.running)

    /// Settles the race with `outcome` unless it is settled already.
    func finish(_ outcome: Swift.Result<Result, any Error>) {
        let waiting: CheckedContinuation<Result, any Error>? = state.withLock { state in
            switch state {
            case .running:
                state = .finished(outcome)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiting?.resume(with: outcome)
    }

    /// The outcome that settled the race, waited for.
    func value() async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let settled: Swift.Result<Result, any Error>? = state.withLock { state in
                guard case .finished(let outcome) = state else {
                    state = .waiting(continuation)
                    return nil
                }
                state = .delivered
                return outcome
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
