import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Issue 21, item 3: a refresh on a store that cannot take the new envelope. The rotated token would be lost with the
/// write and the issuer would revoke the family when the old one came back, so the space is reserved before the request:
/// a full store makes no token request at all, says the login is kept and what to free, and once space is freed the
/// same login refreshes. On a real full file system (a small tmpfs): it runs with the proof suites, where mount works.
@Suite("full store during a refresh: no token request, the login kept", .tags(.proof), .enabled(inTier: .proof))
struct FullStoreRefreshTests {
    @Test(
        "a store that cannot take the new envelope makes no token request, says the login is kept, and the same login refreshes once space is freed"
    )
    func fullStore() async throws {
        try await Self.withSmallStore { fixture, disk in try await refreshOnFullStore(fixture, disk: disk) }
    }

    @Test("a refresh first removes the temporary files killed processes left, so their space does not fill the store")
    func staleReservations() async throws {
        try await Self.withSmallStore { fixture, disk in
            var configuration = fixture.configuration
            let store = disk.mountPoint.appending(path: "store")
            configuration.storeDirectory = store
            let vault = try Vault(configuration: configuration, transport: fixture.transport)
            let userId = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
            try await vault.auth.storeRefreshToken(withNewPassword: AuthFixture.password)
            // What a process killed while holding its reservation leaves: a temporary file nobody holds.
            let stale = store.appending(path: ".tmp-0123456789abcdef")
            try Data(count: 3 << 20).write(to: stale)
            _ = try await vault.auth.loginWithPassword(userId: userId, password: AuthFixture.password)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
        }
    }

    /// Runs `body` with an ``AuthFixture`` and a 4 MiB tmpfs under it, unmounted however `body` ends; records an
    /// issue where no tmpfs can be mounted.
    private static func withSmallStore(_ body: (AuthFixture, Tmpfs) async throws -> Void) async throws {
        try await AuthFixture.with { fixture in
            if let refusal = try await DiskFaultProofTests.tmpfsRefusal(under: fixture.root) {
                Issue.record("no tmpfs here, so no full file system to refresh on: \(refusal)")
                return
            }
            guard case .success(let disk) = try await Tmpfs.mount(at: fixture.root.appending(path: "disk"), size: "4m")
            else { throw FixtureError("mounting the tmpfs failed") }
            do {
                try await body(fixture, disk)
                try await disk.unmount()
            } catch {
                try? await disk.unmount()
                throw error
            }
        }
    }

    private func refreshOnFullStore(_ fixture: AuthFixture, disk: Tmpfs) async throws {
        var configuration = fixture.configuration
        let store = disk.mountPoint.appending(path: "store")
        configuration.storeDirectory = store
        let vault = try Vault(configuration: configuration, transport: fixture.transport)
        let userId = try await vault.auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
        try await vault.auth.storeRefreshToken(withNewPassword: AuthFixture.password)
        let auth = vault.auth
        _ = try await auth.loginWithPassword(userId: userId, password: AuthFixture.password)
        let envelope = try Data(contentsOf: Self.envelopeURL(in: store))

        try await disk.fill("filler")
        let before = fixture.server.tokenRequests(grantType: "refresh_token")
        // A refresh in the open session, and a password login as a new process would make it.
        for attempt in ["refresh", "password login"] {
            do throws(VaultError) {
                if attempt == "refresh" {
                    _ = try await auth.getAccessToken(forceRefresh: true)
                } else {
                    _ = try await Vault(configuration: configuration, transport: fixture.transport).auth
                        .loginWithPassword(
                            userId: userId,
                            password: AuthFixture.password
                        )
                }
                Issue.record("the \(attempt) on a full store succeeded")
            } catch {
                #expect(error.kind == .fileSystemFailed)
                #expect(error.description.contains("No refresh was sent, so the login is kept"), "\(error)")
                #expect(error.description.contains("No space left on device"), "\(error)")
                #expect(error.description.contains(store.standardizedFileURL.path), "\(error)")
                #expect(error.description.contains("Free at least 1048576 bytes"), "\(error)")
            }
        }
        #expect(fixture.server.tokenRequests(grantType: "refresh_token") == before, "a token request was sent")
        #expect(try Data(contentsOf: Self.envelopeURL(in: store)) == envelope)

        try FileManager.default.removeItem(at: disk.mountPoint.appending(path: "filler"))
        _ = try await auth.getAccessToken(forceRefresh: true)
        #expect(fixture.server.tokenRequests(grantType: "refresh_token") == before + 1)
        // The same login, after a restart: the issuer takes the stored token (no reuse, no revoked family).
        _ = try await Vault(configuration: configuration, transport: fixture.transport).auth.loginWithPassword(
            userId: userId,
            password: AuthFixture.password
        )
        let left = try FileManager.default.contentsOfDirectory(atPath: store.path).filter { $0.hasPrefix(".tmp-") }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    private static func envelopeURL(in store: URL) throws -> URL {
        let names = try FileManager.default.contentsOfDirectory(atPath: store.path).filter { $0.hasSuffix(".vault") }
        guard names.count == 1 else { throw FixtureError("expected one envelope, found \(names)") }
        return store.appending(path: names[0])
    }
}
