import CredentialVault
import CredentialVaultSMART
import Foundation
import KeyServiceMock
import Testing

/// SMART Backend Services against KeyServiceMock's SMART mode over real HTTP: a client_credentials token from an
/// RS384 or ES384 assertion, reused while fresh, one request for concurrent callers, and FHIR reads with it.
@Suite("SMART backend services")
struct BackendServicesTests {
    /// A server that knows the service `svc` by `pem`'s public key, and a backend client of it.
    static func with(
        rsa: Bool = true,
        serverKeyId: String = "svc-key",
        _ body: (KeyServiceMockServer, ManualClock, SMARTBackendClient) async throws -> Void
    ) async throws {
        let pem = ClientAuthentication.generatePrivateKey(rsa: rsa)
        let published = try ClientAuthentication.privateKeyJWT(
            pem: pem,
            keyId: serverKeyId,
            algorithm: rsa ? "RS384" : "ES384"
        )
        let jwks = String(decoding: try JSONEncoder().encode(try #require(published.publicJWKS)), as: UTF8.self)
        let clock = ManualClock()
        var configuration = KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        var smart = SMARTMode()
        smart.backendClients = [RegisteredBackendClient(clientId: "svc", jwks: jwks)]
        configuration.smart = smart
        try await KeyServiceMockServer.withServer(configuration) { server in
            let client = try SMARTBackendClient(
                fhirBase: server.fhirBase,
                clientId: "svc",
                privateKeyPEM: pem,
                keyId: "svc-key",
                scopes: ["system/*.rs"],
                requestTimeout: 60,
                now: clock.dateProvider,
                monotonicNow: clock.instantProvider
            )
            try await body(server, clock, client)
        }
    }

    @Test(
        "a backend service reads Patient?_count=5 with a system/*.rs token, and reuses the token",
        arguments: [true, false]
    )
    func searchAndReuse(rsa: Bool) async throws {
        try await Self.with(rsa: rsa) { server, _, client in
            let first = try await client.search("Patient?_count=5")
            #expect(first.first?["entry"]?.arrayValue?.count == 5)
            _ = try await client.read("Patient", id: "p2")
            #expect(server.tokenRequests(grantType: "client_credentials") == 1)
            #expect(await client.grantedScope?.text == "system/*.rs")
        }
    }

    @Test("concurrent callers share one token request; an expired token is fetched again")
    func singleFlight() async throws {
        try await Self.with { server, clock, client in
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await client.getAccessToken().token } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(server.tokenRequests(grantType: "client_credentials") == 1)
            clock.advance(by: 3600)
            let again = try await client.getAccessToken()
            #expect(!tokens.contains(again.token))
            #expect(server.tokenRequests(grantType: "client_credentials") == 2)
        }
    }

    @Test("a key the server does not know is refused with the server's word, after one more try with a new assertion")
    func unknownKey() async throws {
        try await Self.with(serverKeyId: "another-key") { server, _, client in
            let error = await #expect(throws: VaultError.self) { try await client.getAccessToken() }
            #expect(error?.kind == .serverRefused)
            #expect(error?.description.contains("invalid_client") == true)
            #expect(server.tokenRequests(grantType: "client_credentials") == 2)
        }
    }
}
