import Foundation

/// The store's session lock, held across a whole login or refresh (KDF, key service, token endpoint,
/// write), so that two processes never redeem the same refresh token: with rotation and reuse detection,
/// the second redemption would revoke the whole token family.
enum SessionLock {
    /// Waits until the session lock of `store` is free, then holds it until the returned lock is released.
    static func acquire(in store: FileStore, timeout: Duration = .seconds(60)) async throws(VaultError) -> AdvisoryLock
    {
        try store.prepare()
        return try await AdvisoryLock.acquire(path: store.directory.path + "/.session.lock", timeout: timeout)
    }
}
