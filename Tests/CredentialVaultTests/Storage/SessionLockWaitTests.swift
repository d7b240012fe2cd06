import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// The one lock wait: a waiter gives up at its deadline or as soon as its task is cancelled, whoever holds the
/// lock and for however long. The holder here is the test itself, which releases only after the waiter ended.
/// The time limit only keeps a broken wait from hanging the run.
@Suite("waiting for the session lock", .timeLimit(.minutes(10)))
struct SessionLockWaitTests {
    /// The outcome of a wait: nil when the lock was taken.
    static func outcome(_ wait: @escaping @Sendable () async throws(VaultError) -> Void) -> Task<VaultError?, Never> {
        Task {
            do throws(VaultError) {
                try await wait()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Whether the lock at `path` is taken now: a wait with no time to spare times out.
    static func isHeld(_ path: String) async -> Bool {
        do throws(VaultError) {
            _ = try await AdvisoryLock.acquire(path: path, timeout: .zero)
            return false
        } catch {
            return error.kind == .lockTimeout
        }
    }

    @Test("a waiter whose task is cancelled while it waits ends with cancelled, though the lock is still held")
    func cancelledWaiter() async throws {
        try await TemporaryDirectory.with { root in
            let path = root.appending(path: "lock").path
            let holder = try await AdvisoryLock.acquire(path: path, timeout: .seconds(1))
            let (waiting, isWaiting) = AsyncStream<Void>.makeStream()
            let waiter = Self.outcome { () async throws(VaultError) in
                _ = try await AdvisoryLock.acquire(path: path, timeout: .seconds(600)) { isWaiting.yield() }
            }
            for await _ in waiting { break }
            waiter.cancel()
            let error = await waiter.value
            #expect(error?.kind == .cancelled)
            #expect(await Self.isHeld(path), "the waiter ended on its own, not because the lock came free")
            holder.release()
            #expect(await !Self.isHeld(path))
        }
    }

    @Test("a waiter with a short timeout ends with lockTimeout naming the lock, and takes it once it is free")
    func timedOutWaiter() async throws {
        try await TemporaryDirectory.with { root in
            let path = root.appending(path: "lock").path
            let holder = try await AdvisoryLock.acquire(path: path, timeout: .seconds(1))
            let error = await #expect(throws: VaultError.self) {
                try await AdvisoryLock.acquire(path: path, timeout: .milliseconds(50))
            }
            #expect(error?.kind == .lockTimeout)
            #expect(error?.isStorageError == true)
            #expect(error?.description.contains(path) == true, "\(String(describing: error))")
            #expect(await Self.isHeld(path))
            holder.release()
            let next = try await AdvisoryLock.acquire(path: path, timeout: .milliseconds(50))
            #expect(await Self.isHeld(path))
            next.release()
        }
    }

    @Test("a password login waiting for the session lock another holder keeps ends with cancelled when cancelled")
    func cancelledLogin() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = try fixture.restarted().auth
            let holder = try await AdvisoryLock.acquire(path: fixture.sessionLockPath, timeout: .seconds(1))
            let login = Self.outcome { () async throws(VaultError) in
                _ = try await auth.loginWithPassword(password: AuthFixture.password)
            }
            login.cancel()
            let error = await login.value
            #expect(error?.kind == .cancelled)
            #expect(await !auth.isLoggedIn)
            #expect(await Self.isHeld(fixture.sessionLockPath))
            // Only the token exchange of the code flow reached the issuer; the login redeemed nothing.
            #expect(fixture.transport.count(endingWith: "/token") == 1)

            holder.release()
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
            #expect(await auth.isLoggedIn)
        }
    }
}
