import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Logout without clearing the user ends the stored login on this device whatever the issuer answers: the refresh
/// token is erased from the envelope, the user stays listed, and no later login sends a token request.
@Suite("logout: the stored login ends here whether the issuer revokes, refuses, or offers no revocation")
struct LogoutEndsLoginTests {
    @Test("when the issuer refuses to revoke, logout says so, and the stored login no longer opens (0 token requests)")
    func refused() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            _ = try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            fixture.server.faults.set(.internalServerError, for: .revocationEndpoint)
            let error = await #expect(throws: VaultError.self) { try await fixture.vault.auth.logout() }
            #expect(error?.kind == .revocationFailed)
            #expect(error?.httpStatus == 500)
            #expect(
                error?.description.contains("server_error") == true,
                "the issuer's words: \(String(describing: error))"
            )
            try await Self.expectLoggedOut(fixture, userId: userId)
        }
    }

    @Test("when the issuer has no revocation endpoint, logout says so, and the stored login no longer opens")
    func notOffered() async throws {
        try await AuthFixture.with(offersRevocation: false) { fixture in
            let userId = try await fixture.register()
            _ = try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            let error = await #expect(throws: VaultError.self) { try await fixture.vault.auth.logout() }
            #expect(error?.kind == .revocationFailed)
            #expect(error?.description.contains("no revocation endpoint") == true)
            #expect(fixture.transport.count(endingWith: "/revoke") == 0)
            try await Self.expectLoggedOut(fixture, userId: userId)
        }
    }

    @Test("when the issuer revokes, the stored login is erased too, and a new password stores a new login")
    func revoked() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            _ = try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            try await fixture.vault.auth.logout()
            #expect(fixture.transport.count(endingWith: "/revoke") == 1)
            try await Self.expectLoggedOut(fixture, userId: userId)
            // Logging in again: a new OpenID Connect login and a new password replace the erased one.
            try await fixture.register(password: "another password")
            let again = try fixture.restarted()
            _ = try await again.auth.loginWithPassword(password: "another password")
            #expect(await again.auth.isLoggedIn)
        }
    }

    /// The user stays listed, but no login opens: refused before Argon2id, the key service or the token endpoint.
    private static func expectLoggedOut(_ fixture: AuthFixture, userId: String) async throws {
        #expect(await !fixture.vault.auth.isLoggedIn)
        let restarted = try fixture.restarted()
        #expect(try await restarted.userStorage.availableUserIds == [userId], "the user stays listed")
        #expect(await !restarted.userStorage.hasStoredRefreshToken(userId: userId))
        let tokenRequests = fixture.transport.count(endingWith: "/token")
        let keyRequests = fixture.transport.count(endingWith: "/key")
        let error = await #expect(throws: VaultError.self) {
            try await restarted.auth.loginWithPassword(password: AuthFixture.password)
        }
        #expect(error?.isNotRegistered == true, "\(String(describing: error))")
        #expect(error?.description.contains("logged out") == true)
        #expect(fixture.transport.count(endingWith: "/token") == tokenRequests, "no token request after logout")
        #expect(fixture.transport.count(endingWith: "/key") == keyRequests, "no key-service attempt either")
        let envelope = try #require(
            try FileManager.default.contentsOfDirectory(
                at: fixture.root.appending(path: "store"),
                includingPropertiesForKeys: nil
            )
            .first { $0.pathExtension == "vault" }
        )
        let stored = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: envelope)) as? [String: Any]
        )
        let ciphertext = stored["ciphertext"] as? String
        #expect(ciphertext?.isEmpty == true, "the sealed token is gone from the file")
    }
}
