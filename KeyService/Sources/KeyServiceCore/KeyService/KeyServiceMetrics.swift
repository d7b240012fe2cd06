import Metrics

/// The key service's metrics, through swift-metrics: a no-op until the process bootstraps a backend (the
/// `keyservice` executable exports them for Prometheus at `/metrics`).
///
/// - `keyservice_requests_total{route, outcome}`: answers by route (`createkey`, `key`) and outcome.
/// - `keyservice_wrong_credentials_total`: wrong secrets and long secrets counted against a key.
/// - `keyservice_keys_locked_total`: keys locked by a third wrong credential in a row.
/// - `keyservice_database_duration_seconds{operation}`: how long each storage step took.
package struct KeyServiceMetrics: Sendable {
    private let wrongCredentials = Counter(label: "keyservice_wrong_credentials_total")
    private let keysLocked = Counter(label: "keyservice_keys_locked_total")

    package init() {}

    /// Counts one answer of `route` with `outcome`.
    package func request(route: String, outcome: String) {
        Counter(label: "keyservice_requests_total", dimensions: [("route", route), ("outcome", outcome)]).increment()
    }

    /// Counts one wrong credential, and a lock when it locked the key.
    func wrongCredential(locked: Bool) {
        wrongCredentials.increment()
        if locked { keysLocked.increment() }
    }

    /// Runs one storage step and records how long it took, failed or not.
    func timeDatabase<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            let nanoseconds =
                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            Timer(label: "keyservice_database_duration_seconds", dimensions: [("operation", operation)])
                .recordNanoseconds(nanoseconds)
        }
        return try await body()
    }
}
