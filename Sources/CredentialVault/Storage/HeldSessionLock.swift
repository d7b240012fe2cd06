import Foundation

/// Proof that the store's session lock is held: the lock taken across a whole login or refresh (KDF, key service,
/// token endpoint, write), so that two processes never redeem the same refresh token (with rotation and reuse
/// detection, the second redemption would revoke the whole token family).
///
/// Every step of ``UserStorage`` that reads an envelope to write it back takes one (`under held:`), so a call
/// without the lock does not compile. The only way to one is ``holding(in:timeout:isolation:_:)`` (through
/// ``UserStorage/withSessionLock(isolation:_:)``), which lends it to a closure for the closure's run and releases
/// the lock when the closure returns.
///
/// It is `~Copyable` and lent `borrowing`: a borrowed non-copyable value can be neither copied nor stored, so no
/// token outlives its scope, and the lock's lifetime is the closure's, not an optimiser's guess (the
/// `withExtendedLifetime` this replaces). Swift 6.3 passes a borrowed `Sendable` non-copyable value across an
/// actor hop and into non-escaping closures, so async steps on another actor take it as they take any argument;
/// what it cannot do is ride in an `Optional` made on the spot (that would consume it), so a step that holds the
/// lock only sometimes has one path with the token and one without. A `~Escapable` token would say the same
/// more directly, but lifetime dependencies are not yet a stable language feature.
struct HeldSessionLock: ~Copyable, Sendable {
    private let lock: AdvisoryLock

    private init(_ lock: AdvisoryLock) {
        self.lock = lock
    }

    /// Waits until the session lock of `store` is free, then runs `body` holding it, on the caller's isolation.
    /// - Throws: ``VaultError``: `.lockTimeout` after `timeout`, `.cancelled`, a file-system error; or what `body`
    ///   throws.
    static func holding<T>(
        in store: FileStore,
        timeout: Duration = .seconds(60),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (borrowing HeldSessionLock) async throws(VaultError) -> T
    ) async throws(VaultError) -> T {
        try store.prepare()
        let held = HeldSessionLock(
            try await AdvisoryLock.acquire(path: store.directory.path + "/.session.lock", timeout: timeout)
        )
        return try await body(held)
    }
}
