import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

/// A description says what happened, in words a person acts on: the step that failed, the status, no codes.
@Suite("error messages say what happened, in words")
struct ErrorMessageTests {
    @Test("a key service failing with HTTP 500 during a password login names checking the password, not creating a key")
    func serverErrorDuringPasswordLogin() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            fixture.server.faults.set(.internalServerError, for: .keyService)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.loginWithPassword(password: AuthFixture.password)
            }
            #expect(error?.kind == .serverRefused)
            #expect(error?.httpStatus == 500)
            #expect(error?.isKeyServiceError == true)
            #expect(error?.isWrongPassword == false)
            let description = error?.description ?? ""
            #expect(description.contains("checking the password"), "\(description)")
            #expect(description.contains("HTTP 500"), "\(description)")
            #expect(!description.localizedCaseInsensitiveContains("creat"), "\(description)")
            // A server error is no verdict on the password: it does not count towards the lock.
            #expect(await fixture.vault.userStorage.consecutiveWrongPasswords(userId: userId) == 0)
        }
    }

    @Test("a refused connection is a network error that says connection refused, with no numeric code")
    func connectionRefused() async throws {
        try await RefusingPort.with { base in
            let client = try HTTPKeyService(server: base, realm: "demo")
            let error = await #expect(throws: VaultError.self) {
                try await client.getKey(keyId: UUID().uuidString, secret: SecureBytes(Data("secret".utf8)))
            }
            #expect(error?.isNetworkError == true)
            #expect(error?.kind == .unreachable)
            let description = error?.description ?? ""
            #expect(description.contains("connection refused"), "\(description)")
            #expect(description.contains("127.0.0.1"), "\(description)")
            #expect(!description.contains("-10"), "\(description)")
        }
    }

    @Test("an issuer that refuses connections at discovery says connection refused, naming the issuer's host")
    func issuerRefused() async throws {
        try await RefusingPort.with { base in
            try await TemporaryDirectory.with { root in
                let issuer = TIMLayout.issuer(server: base, realm: "demo")
                let vault = try Vault(
                    configuration: VaultConfiguration(
                        issuer: issuer,
                        clientId: "vault",
                        keyServiceURL: TIMLayout.keyServiceURL(issuer: issuer),
                        storeDirectory: root.appending(path: "store")
                    )
                )
                let error = await #expect(throws: VaultError.self) { try await vault.auth.metadata() }
                #expect(error?.isNetworkError == true)
                #expect(error?.isKeyServiceError == false)
                let description = error?.description ?? ""
                #expect(description.contains("connection refused"), "\(description)")
                #expect(description.contains("issuer"), "\(description)")
                #expect(!description.contains("-10"), "\(description)")
            }
        }
    }
}
