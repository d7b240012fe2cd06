import CredentialVaultSMART
import Foundation
import KeyServiceMock
import Synchronization
import Testing

@testable import CredentialVault

/// An app with no client id registers itself at the FHIR server (RFC 7591), keeps the registration sealed with the
/// refresh token and reuses it in the next process; its key rotates without losing the login (RFC 7592, or by the
/// first accepted assertion). Real HTTP against keyservice-mock with dynamic registration on, which enforces every
/// registered client's authentication.
@Suite("SMART dynamic client registration")
struct DynamicRegistrationTests {
    /// The launch of an app with no client id, registering with `methods`; the registered client's id.
    static func launchRegistering(
        _ fixture: SMARTFixture,
        methods: [ClientAuthentication.Method] = DynamicRegistration.preference
    ) async throws -> (SMARTClient, LaunchContext, ClientRegistration) {
        let client = try fixture.client(registration: DynamicRegistration(clientName: "dcr test", methods: methods))
        let context = try await client.authorize { url in await Browser.follow(url) }
        try await client.vault().auth.storeRefreshToken(withNewPassword: SMARTFixture.password)
        let registration = try #require(try await client.vault().auth.clientRegistration)
        return (client, context, registration)
    }

    @Test("no client id: the launch registers a private_key_jwt client, and the next process reuses it sealed")
    func registersAndReuses() async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            let (_, launched, registration) = try await Self.launchRegistering(fixture)
            #expect(registration.method == .privateKeyJWT)
            #expect(launched.clientId == registration.clientId)
            #expect(fixture.server.registrationRequests == 1)
            let atServer = try #require(fixture.server.registeredClient(registration.clientId))
            #expect(atServer.tokenEndpointAuthMethod == "private_key_jwt")
            #expect(atServer.keyIds == registration.keyIds)

            // The next start: the password opens the registration with the token; no new registration.
            let later = try fixture.client(registration: DynamicRegistration(clientName: "dcr test"))
            let context = try await SMARTFixture.login(later)
            #expect(context == launched)
            #expect(try await later.vault().auth.clientRegistration == registration)
            let patient = try #require(context.patient)
            let resource = try await later.read("Patient", id: patient)
            #expect(resource["id"]?.stringValue == patient)
            _ = try await later.getAccessToken(forceRefresh: true)
            #expect(fixture.server.registrationRequests == 1)
            #expect(fixture.server.tokenRequests(clientId: registration.clientId) >= 3)

            // The private key and the registration's secrets are in no file as text: only sealed.
            let files = try FileManager.default.contentsOfDirectory(atPath: fixture.root.appending(path: "store").path)
            for name in files {
                let text = try String(
                    decoding: Data(contentsOf: fixture.root.appending(path: "store/\(name)")),
                    as: UTF8.self
                )
                #expect(!text.contains("PRIVATE KEY"), "\(name)")
                #expect(!text.contains(try #require(registration.registrationAccessToken)), "\(name)")
            }
        }
    }

    @Test(
        "a public client and a client_secret_basic client register and log in again the same way",
        arguments: [
            ClientAuthentication.Method.none, .clientSecretBasic, .clientSecretPost,
        ]
    )
    func otherMethods(_ method: ClientAuthentication.Method) async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            let (_, launched, registration) = try await Self.launchRegistering(fixture, methods: [method])
            #expect(registration.method == method)
            #expect(fixture.server.registeredClient(registration.clientId)?.tokenEndpointAuthMethod == method.name)
            #expect((registration.clientSecret != nil) == (method != .none))
            let later = try fixture.client(registration: DynamicRegistration(methods: [method]))
            #expect(try await SMARTFixture.login(later) == launched)
            #expect(fixture.server.registrationRequests == 1)
        }
    }

    @Test("rotation through RFC 7592: the server gets both keys, then the new one alone; the login goes on")
    func rotatesThroughManagement() async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            let (client, _, registration) = try await Self.launchRegistering(fixture)
            let rotated = try await client.vault().auth.rotateClientKey()
            #expect(rotated.keyIds.count == 1)
            #expect(rotated.keyIds != registration.keyIds)
            #expect(!rotated.hasPendingKey)
            #expect(fixture.server.registeredClient(registration.clientId)?.keyIds == rotated.keyIds)
            _ = try await client.getAccessToken(forceRefresh: true)

            // A new process opens the rotated key with the token and signs with it.
            let later = try fixture.client(registration: DynamicRegistration())
            _ = try await SMARTFixture.login(later)
            #expect(try await later.vault().auth.clientRegistration?.keyIds == rotated.keyIds)
        }
    }

    @Test("rotation without RFC 7592: the old key signs until the server lists the new one, which then alone signs")
    func rotatesByFirstAcceptedAssertion() async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            let (client, _, registration) = try await Self.launchRegistering(fixture)
            let auth = try await client.vault().auth
            // As a server without registration management: no registration_client_uri.
            let unmanaged = ClientRegistration(
                clientId: registration.clientId,
                method: registration.method,
                registrationClientURI: nil,
                metadata: registration.metadata,
                clientSecret: nil,
                registrationAccessToken: nil,
                keys: registration.keys
            )
            try await auth.updateStoredLogin { $0.replacingClient(unmanaged) }
            let waiting = try await client.vault().auth.rotateClientKey()
            #expect(waiting.hasPendingKey)
            #expect(waiting.keyIds.first == registration.keyIds.first)
            let jwks = try #require(waiting.publicJWKS?["keys"]?.arrayValue)
            #expect(jwks.count == 2)

            // The server does not list the new key yet: refused, then the old key signs; the new one still waits.
            let before = fixture.server.tokenRequests(clientId: registration.clientId)
            _ = try await client.getAccessToken(forceRefresh: true)
            #expect(fixture.server.tokenRequests(clientId: registration.clientId) == before + 2)
            #expect(try await client.vault().auth.clientRegistration?.hasPendingKey == true)

            // The app publishes both keys at the server (here: the RFC 7592 update the test does by hand).
            try await Self.publish(waiting.publicJWKS, for: registration)
            _ = try await client.getAccessToken(forceRefresh: true)
            let promoted = try #require(try await client.vault().auth.clientRegistration)
            #expect(promoted.keyIds == [waiting.keyIds[1]])

            // Sealed: a new process signs with the new key alone.
            let later = try fixture.client(registration: DynamicRegistration())
            _ = try await SMARTFixture.login(later)
            #expect(try await later.vault().auth.clientRegistration?.keyIds == promoted.keyIds)
        }
    }

    @Test("logout --clear-user deletes the registration at the server")
    func logoutDeletes() async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            let (client, _, registration) = try await Self.launchRegistering(fixture)
            try await client.vault().auth.logout(clearUser: true)
            #expect(fixture.server.registeredClient(registration.clientId) == nil)
        }
    }

    @Test("no client id at a server without a registration endpoint: refused before any browser opens")
    func noRegistrationEndpoint() async throws {
        try await SMARTFixture.with(dynamicRegistration: false) { fixture in
            let client = try fixture.client(registration: DynamicRegistration())
            let opened = BrowserCount()
            let error = await #expect(throws: VaultError.self) {
                try await client.authorize { _ in opened.add() }
            }
            #expect(error?.kind == .registrationFailed)
            #expect(error?.isConfigurationError == true)
            #expect(error?.description.contains("registration endpoint") == true)
            #expect(opened.count == 0)
        }
    }

    @Test("a registration the server refuses is a registrationFailed error in the server's words")
    func refusedRegistration() async throws {
        try await SMARTFixture.with(dynamicRegistration: true) { fixture in
            var configuration = fixture.configuration
            configuration.clientId = ""
            // Plain http to another host is no redirect URI a server registers (RFC 8252: loopback only).
            configuration.redirectURI = URL(string: "http://app.example/callback")!
            let client = try SMARTClient(
                fhirBase: fixture.server.fhirBase,
                configuration: configuration,
                transport: fixture.transport
            )
            let error = await #expect(throws: VaultError.self) {
                try await client.authorize { _ in }
            }
            #expect(error?.kind == .registrationFailed)
            #expect(error?.description.contains("invalid_redirect_uri") == true)
            #expect(fixture.server.registrationRequests == 0)
        }
    }

    /// Replaces the registered client's keys at the server with `jwks` (RFC 7592 PUT, as the app's operator would).
    static func publish(_ jwks: JSONValue?, for registration: ClientRegistration) async throws {
        let uri = try #require(registration.registrationClientURI)
        var body = registration.metadata
        body["client_id"] = .string(registration.clientId)
        let published: JSONValue = try #require(jwks)
        body["jwks"] = published
        let request = HTTPRequest(
            method: "PUT",
            url: uri,
            headers: [
                "Content-Type": "application/json",
                "Authorization": "Bearer \(try #require(registration.registrationAccessToken))",
            ],
            body: try JSONEncoder().encode(body),
            timeout: 60
        )
        let answer = try await TestTLS.transport().send(request)
        #expect(answer.status == 200)
    }
}

/// How many times a test's browser was asked to open a URL.
final class BrowserCount: Sendable {
    private let opened = Mutex(0)
    func add() { opened.withLock { $0 += 1 } }
    var count: Int { opened.withLock { $0 } }
}
