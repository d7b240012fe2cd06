import Metrics

/// The key service's metrics, through swift-metrics: a no-op until the process bootstraps a backend (the
/// `keyservice` executable exports them for Prometheus at `/metrics`).
///
/// - `keyservice_requests_total{route, outcome}`: answers by route (`createkey`, `key`; protocol 2's `v2/createkey`,
///   `v2/enroll`, `v2/evaluate`, `v2/confirm`, `v2/key`) and outcome.
/// - `keyservice_wrong_credentials_total`: wrong secrets and long secrets counted against a key.
/// - `keyservice_keys_locked_total`: keys locked by a third wrong credential (or protocol 2 evaluation) in a row.
/// - `keyservice_keys_repeppered_total`: keys moved to the newest pepper at a right-secret login (or protocol 2
///   confirm).
/// - `keyservice_database_duration_seconds{operation}`: how long each storage step took.
package struct KeyServiceMetrics: Sendable {
    private let wrongCredentials = Counter(label: "keyservice_wrong_credentials_total")
    private let keysLocked = Counter(label: "keyservice_keys_locked_total")
    private let keysRepeppered = Counter(label: "keyservice_keys_repeppered_total")

    /// The counters of the answers there are, made once: a backend's lookup per request costs more than the count.
    private let requests: [String: [String: Counter]]
    private let databaseTimers: [String: Timer]

    package init() {
        let outcomes = [
            "createkey": [
                "created", "too_many_keys", "key_store_full", "unable_to_create_key", "invalid_request", "server_error",
            ],
            "key": [
                "granted", "wrong_credential", "locked", "missing", "temporarily_unavailable", "invalid_request",
                "server_error", "protocol_v2_key",
            ],
            "v2/createkey": [
                "created", "invalid_element", "too_many_keys", "key_store_full", "unable_to_create_key",
                "invalid_request", "server_error",
            ],
            "v2/enroll": [
                "enrolled", "bad_longsecret", "missing", "already_enrolled", "not_protocol_v2",
                "temporarily_unavailable", "invalid_request", "server_error",
            ],
            "v2/evaluate": [
                "evaluated", "invalid_element", "locked", "missing", "not_protocol_v2", "not_enrolled",
                "temporarily_unavailable", "invalid_request", "server_error",
            ],
            "v2/confirm": [
                "granted", "bad_proof", "missing", "not_protocol_v2", "temporarily_unavailable", "invalid_request",
                "server_error",
            ],
            "v2/key": [
                "granted", "wrong_credential", "locked", "missing", "not_protocol_v2", "temporarily_unavailable",
                "invalid_request", "server_error",
            ],
        ]
        var requests: [String: [String: Counter]] = [:]
        for (route, names) in outcomes {
            for outcome in names {
                requests[route, default: [:]][outcome] = Self.requestCounter(route: route, outcome: outcome)
            }
        }
        self.requests = requests
        databaseTimers = Dictionary(
            uniqueKeysWithValues: ["count", "insert", "rewrap", "enroll", "confirm"].map {
                ($0, Self.databaseTimer($0))
            }
        )
    }

    /// Counts one answer of `route` with `outcome`.
    package func request(route: String, outcome: String) {
        // Two lookups rather than one of `route + " " + outcome`: that string is built on the heap, per request.
        (requests[route]?[outcome] ?? Self.requestCounter(route: route, outcome: outcome)).increment()
    }

    private static func requestCounter(route: String, outcome: String) -> Counter {
        Counter(label: "keyservice_requests_total", dimensions: [("route", route), ("outcome", outcome)])
    }

    private static func databaseTimer(_ operation: String) -> Timer {
        Timer(label: "keyservice_database_duration_seconds", dimensions: [("operation", operation)])
    }

    /// Counts one wrong credential, and a lock when it locked the key.
    func wrongCredential(locked: Bool) {
        wrongCredentials.increment()
        if locked { keysLocked.increment() }
    }

    /// Counts one protocol 2 evaluation, and a lock when it locked the key (its count reached the limit).
    func evaluationCounted(locked: Bool) {
        if locked { keysLocked.increment() }
    }

    /// Counts one key moved to the newest pepper.
    func keyRepeppered() {
        keysRepeppered.increment()
    }

    /// Runs one storage step and records how long it took, failed or not.
    func timeDatabase<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            let nanoseconds =
                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            (databaseTimers[operation] ?? Self.databaseTimer(operation)).recordNanoseconds(nanoseconds)
        }
        return try await body()
    }
}
