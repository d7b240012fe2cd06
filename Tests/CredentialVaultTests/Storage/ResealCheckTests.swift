import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// A rotated refresh token is sealed only into an envelope re-read and checked under the session lock: one
/// whose header changed since the session opened it is reported and left as found, never sealed again.
@Suite("a reseal re-reads and checks the envelope", .timeLimit(.minutes(10)))
struct ResealCheckTests {
    /// A change a person or a program could make to an envelope's header on disk.
    enum HeaderEdit: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case opsLimit
        case createdAt
        case boundClientId

        var testDescription: String {
            switch self {
            case .opsLimit: "kdf.opsLimit raised by one"
            case .createdAt: "createdAt a second earlier"
            case .boundClientId: "binding.clientId renamed"
            }
        }

        /// Edits the envelope at `url` in place, as JSON, keeping its mode.
        func apply(to url: URL) throws {
            var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            switch self {
            case .opsLimit:
                var kdf = try #require(json["kdf"] as? [String: Any])
                kdf["opsLimit"] = try #require(kdf["opsLimit"] as? Int) + 1
                json["kdf"] = kdf
            case .createdAt:
                json["createdAt"] = try #require(json["createdAt"] as? Int) - 1
            case .boundClientId:
                var binding = try #require(json["binding"] as? [String: Any])
                binding["clientId"] = "another-client"
                json["binding"] = binding
            }
            try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: url)
            chmod(url.path, 0o600)
        }
    }

    /// The one envelope in the fixture's store.
    static func envelopeURL(_ fixture: AuthFixture) throws -> URL {
        let store = try #require(fixture.configuration.storeDirectory)
        let names = try FileManager.default.contentsOfDirectory(atPath: store.path).filter { $0.hasSuffix(".vault") }
        return store.appending(path: try #require(names.count == 1 ? names.first : nil))
    }

    @Test(
        "a header changed on disk after a login fails the next refresh with damagedRecord, and is not sealed again",
        arguments: HeaderEdit.allCases
    )
    func changedAfterLogin(edit: HeaderEdit) async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let vault = try fixture.restarted()
            _ = try await vault.auth.loginWithPassword(password: AuthFixture.password)
            let url = try Self.envelopeURL(fixture)
            try edit.apply(to: url)
            let tampered = try Data(contentsOf: url)
            let redemptions = fixture.transport.count(endingWith: "/token")

            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.getAccessToken(forceRefresh: true)
            }
            #expect(error?.kind == .damagedRecord, "\(String(describing: error))")
            #expect(error?.isStorageError == true)
            #expect(fixture.transport.count(endingWith: "/token") == redemptions, "the stored token was redeemed")
            #expect(try Data(contentsOf: url) == tampered, "the changed envelope was sealed again")
            // Still changed, it does not open with the right password either.
            await #expect(throws: VaultError.self) {
                try await fixture.restarted().auth.loginWithPassword(password: AuthFixture.password)
            }
            #expect(try Data(contentsOf: url) == tampered)
        }
    }

    /// A call that unlocks the envelope with the password and then seals a token into it.
    enum Reseal: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case passwordLogin
        case storeWithExistingPassword

        var testDescription: String {
            switch self {
            case .passwordLogin: "Auth.loginWithPassword"
            case .storeWithExistingPassword: "UserStorage.storeRefreshToken(_:withExistingPassword:)"
            }
        }
    }

    @Test(
        "an envelope changed while its unlock waits for the key service is refused before sealing, and left as found",
        arguments: Reseal.allCases
    )
    func changedDuringUnlock(reseal: Reseal) async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let configuration = fixture.configuration
            let held = HeldKeyService(
                try HTTPKeyService(baseURL: configuration.keyServiceURL, transport: fixture.transport)
            )
            defer { held.released.give() }
            let storage = UserStorage(
                keyService: held,
                directory: configuration.storeDirectory,
                binding: EnvelopeBindingTests.binding(of: configuration),
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes,
                now: configuration.now
            )
            let auth = Auth(configuration: configuration, userStorage: storage, transport: fixture.transport)
            let redemptions = fixture.transport.count(endingWith: "/token")
            let url = try Self.envelopeURL(fixture)

            let call = SessionLockWaitTests.outcome { () async throws(VaultError) in
                switch reseal {
                case .passwordLogin:
                    _ = try await auth.loginWithPassword(password: AuthFixture.password)
                case .storeWithExistingPassword:
                    let token = RefreshToken(token: "another refresh token", userId: userId)
                    try await storage.storeRefreshToken(token, withExistingPassword: AuthFixture.password)
                }
            }
            // The envelope was read and the password derived; its key is on the way. Now the header changes.
            await held.arrived.wait()
            try HeaderEdit.createdAt.apply(to: url)
            let tampered = try Data(contentsOf: url)
            held.released.give()

            let error = await call.value
            #expect(error?.kind == .damagedRecord, "\(String(describing: error))")
            #expect(try Data(contentsOf: url) == tampered, "the changed envelope was sealed again")
            #expect(fixture.transport.count(endingWith: "/token") == redemptions, "the stored token was redeemed")
            #expect(await !auth.isLoggedIn)
        }
    }
}
