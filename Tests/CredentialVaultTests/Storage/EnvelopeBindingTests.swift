import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// An envelope names, in its authenticated header, the issuer, client and key service its token belongs to.
@Suite("envelopes bound to their issuer, client and key service")
struct EnvelopeBindingTests {
    /// The part of a configuration a binding names.
    enum Field: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case issuer
        case clientId
        case keyService

        var testDescription: String {
            switch self {
            case .issuer: "the issuer"
            case .clientId: "the client id"
            case .keyService: "the key service URL"
            }
        }

        /// `configuration` with this field naming somewhere else: another realm of the same server, another
        /// client, a key service at `elsewhere` (a port nothing answers at).
        func changed(in configuration: VaultConfiguration, elsewhere: URL) -> VaultConfiguration {
            var changed = configuration
            switch self {
            case .issuer:
                changed.issuer = configuration.issuer.deletingLastPathComponent().appending(path: "elsewhere")
            case .clientId:
                changed.clientId = "another-client"
            case .keyService:
                changed.keyServiceURL = elsewhere.appending(path: "auth/realms/demo/keyservice/v1")
            }
            return changed
        }

        /// This field of `binding`, as the binding spells it.
        func value(in binding: EnvelopeBinding) -> String {
            switch self {
            case .issuer: binding.issuer
            case .clientId: binding.clientId
            case .keyService: binding.keyService
            }
        }
    }

    static func binding(of configuration: VaultConfiguration) -> EnvelopeBinding {
        EnvelopeBinding(
            issuer: configuration.issuer,
            clientId: configuration.clientId,
            keyServiceURL: configuration.keyServiceURL
        )
    }

    @Test(
        "a login stored under one configuration is refused under one naming another, before anything is sent",
        arguments: Field.allCases
    )
    func mismatchRefused(field: Field) async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            try await fixture.vault.auth.enableDeviceUnlock()
            try await RefusingPort.with { elsewhere in
                let configuration = field.changed(in: fixture.configuration, elsewhere: elsewhere)
                let stored = field.value(in: Self.binding(of: fixture.configuration))
                let configured = field.value(in: Self.binding(of: configuration))
                #expect(stored != configured)
                let transport = CountingTransport()
                let other = try Vault(configuration: configuration, transport: transport)

                var errors: [VaultError?] = []
                for guess in [AuthFixture.password, "wrong 1", "wrong 2", "wrong 3"] {
                    errors.append(
                        await #expect(throws: VaultError.self) {
                            try await other.auth.loginWithPassword(password: guess)
                        }
                    )
                }
                errors.append(
                    await #expect(throws: VaultError.self) { try await other.auth.loginWithDeviceUnlock() }
                )
                errors.append(
                    await #expect(throws: VaultError.self) {
                        try await other.userStorage.getStoredRefreshToken(
                            userId: userId,
                            password: AuthFixture.password
                        )
                    }
                )
                for error in errors {
                    #expect(error?.kind == .bindingMismatch)
                    #expect(error?.isConfigurationError == true)
                    #expect(error?.isWrongPassword == false)
                    #expect(error?.description.contains(stored) == true, "\(String(describing: error))")
                    #expect(error?.description.contains(configured) == true, "\(String(describing: error))")
                }
                #expect(transport.count(endingWith: "") == 0, "a request was sent")
                #expect(await other.userStorage.consecutiveWrongPasswords(userId: userId) == 0)
            }
            // Three wrong passwords were refused without an attempt at the key service: the key is not locked.
            let token = try await fixture.restarted().auth.loginWithPassword(password: AuthFixture.password)
            #expect(token.userId == userId)
        }
    }

    @Test(
        "a binding edited on disk to name another configuration makes the envelope fail to open there",
        arguments: Field.allCases
    )
    func editedBindingDoesNotOpen(field: Field) async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let store = try #require(fixture.configuration.storeDirectory)
            let name = try #require(
                try FileManager.default.contentsOfDirectory(atPath: store.path).first { $0.hasSuffix(".vault") }
            )
            let url = store.appending(path: name)
            try await RefusingPort.with { elsewhere in
                let configuration = field.changed(in: fixture.configuration, elsewhere: elsewhere)
                let binding = Self.binding(of: configuration)
                // The other binding, over the real key service, so the password is checked and the box is tried.
                let storage = UserStorage(
                    keyService: try HTTPKeyService(
                        baseURL: fixture.configuration.keyServiceURL,
                        transport: TestTLS.transport()
                    ),
                    directory: store,
                    binding: binding,
                    opsLimit: VaultFixture.opsLimit,
                    memLimitBytes: VaultFixture.memLimitBytes
                )
                let before = await #expect(throws: VaultError.self) {
                    try await storage.getStoredRefreshToken(userId: userId, password: AuthFixture.password)
                }
                #expect(before?.kind == .bindingMismatch)

                var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
                json["binding"] = [
                    "issuer": binding.issuer, "clientId": binding.clientId, "keyService": binding.keyService,
                ]
                try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: url)
                chmod(url.path, 0o600)

                let after = await #expect(throws: VaultError.self) {
                    try await storage.getStoredRefreshToken(userId: userId, password: AuthFixture.password)
                }
                #expect(after?.kind == .envelopeDidNotOpen)
                #expect(after?.isWrongPassword == false)
            }
        }
    }
}
