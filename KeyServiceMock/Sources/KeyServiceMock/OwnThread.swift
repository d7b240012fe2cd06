import VaultPOSIX

/// Runs blocking work (reading a child process's pipe, waiting for it to exit) on a thread of its own
/// (``VaultPOSIX/BlockingThread``).
///
/// Swift's cooperative pool has one thread per core, two on a small machine; an in-process server needs
/// them to answer. A test that blocks one while it waits for another process can starve the server of
/// the same process, so blocking waits go through here.
package func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await BlockingThread.run("ksmock-thread", body)
}
