import Foundation

/// The tokens ``Auth`` holds for single resources, in memory only, apart from the session's access token: each is
/// handed out while it is fresh (``AccessTokenFreshness``, the same rule as the session's token), and concurrent
/// callers for one key share one request.
struct ScopedTokenCache: Sendable {
    private var fresh: [ScopedTokenKey: (token: AccessToken, until: ContinuousClock.Instant)] = [:]
    private var inFlight: [ScopedTokenKey: Task<Result<AccessToken, VaultError>, Never>] = [:]

    /// The token kept for `key` while it is fresh at `now`.
    func freshToken(_ key: ScopedTokenKey, now: ContinuousClock.Instant) -> AccessToken? {
        guard let kept = fresh[key], now < kept.until else { return nil }
        return kept.token
    }

    /// The request under way for `key`, if any.
    func request(_ key: ScopedTokenKey) -> Task<Result<AccessToken, VaultError>, Never>? {
        inFlight[key]
    }

    /// Records `task` as the request for `key`.
    mutating func start(_ key: ScopedTokenKey, _ task: Task<Result<AccessToken, VaultError>, Never>) {
        inFlight[key] = task
    }

    /// The request for `key` ended; its token, when there is one that says when it expires, is kept.
    mutating func finish(_ key: ScopedTokenKey, keeping token: AccessToken?, until: ContinuousClock.Instant?) {
        inFlight[key] = nil
        if let token, let until { fresh[key] = (token, until) } else { fresh[key] = nil }
    }

    /// Cancels every request and forgets every token (the session ended).
    mutating func removeAll() {
        for task in inFlight.values { task.cancel() }
        inFlight = [:]
        fresh = [:]
    }
}
