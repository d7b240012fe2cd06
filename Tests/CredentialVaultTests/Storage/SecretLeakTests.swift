import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("secrets stay out of descriptions, errors and files")
struct SecretLeakTests {
    static let password = "Pa55-known-secret-password"
    static let token = "known-secret-refresh-token-0123456789"

    @Test("no password, key or token appears in any description or error message")
    func noLeaks() async throws {
        try await VaultFixture.with { vault in
            let refreshToken = RefreshToken(token: Self.token, userId: "dave")
            try await vault.storage.storeRefreshToken(refreshToken, withNewPassword: Self.password)
            try await vault.storage.enableDeviceUnlock(userId: "dave", password: Self.password)

            var texts = [refreshToken.description, String(reflecting: refreshToken), "\(refreshToken)"]
            var secrets = [Self.password, Self.token]
            let created = try await vault.keyService.createKey(secret: SecureBytes(Data(Self.password.utf8)))
            texts += [created.description, String(reflecting: created), "\(created.key)"]
            secrets += [created.key.base64EncodedString(), created.key.base64URLEncodedString()]
            if let longSecret = created.longSecret, let text = longSecret.utf8String() {
                texts.append("\(longSecret)")
                secrets.append(text)
            }

            func collect(_ body: () async throws -> Void) async {
                do { try await body() } catch {
                    texts += ["\(error)", String(reflecting: error), error.localizedDescription]
                }
            }
            await collect {
                _ = try await vault.storage.getStoredRefreshToken(userId: "dave", password: Self.password + "x")
            }
            await collect {
                _ = try await vault.storage.getStoredRefreshToken(userId: "nobody", password: Self.password)
            }
            await collect {
                _ = try await vault.storage.storeRefreshToken(refreshToken, withExistingPassword: Self.token)
            }
            await collect { _ = try await vault.storage.getStoredRefreshToken(userId: "dave", password: Self.password) }
            await collect { _ = try await vault.storage.getStoredRefreshTokenViaDeviceUnlock(userId: "dave") }
            vault.server.faults.set(.undecodableBody, for: .keyService)
            await collect { _ = try await vault.storage.getStoredRefreshToken(userId: "dave", password: Self.password) }
            vault.server.faults.set(nil, for: .keyService)
            #expect(texts.count > 12)

            for text in texts {
                for secret in secrets {
                    #expect(!text.contains(secret), "a secret appears in: \(text.prefix(80))…")
                }
            }

            // On disk the envelope holds neither the token nor the password.
            for name in try vault.storeFiles() where !name.hasPrefix(".") {
                let contents = try Data(contentsOf: vault.directory.appending(path: name))
                #expect(contents.range(of: Data(Self.token.utf8)) == nil, "\(name) holds the token")
                #expect(contents.range(of: Data(Self.password.utf8)) == nil, "\(name) holds the password")
            }
        }
    }
}
