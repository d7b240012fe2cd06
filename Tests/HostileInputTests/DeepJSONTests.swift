import ArgumentParser
import Foundation
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault
@testable import CredentialVaultCLI
@testable import CredentialVaultSMART

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deeply nested JSON, the class that crashed Foundation's JSONScanner (issue 21), given to every parser that reads
/// untrusted JSON through its own entry: 513 levels opened by the last byte (on which the scanner traps) and
/// 100,000 levels. Each parser refuses each with its typed error, and the process lives. Each runs in an async test,
/// on a cooperative thread, whose stack is the smallest a parser meets.
@Suite(
    "hostile input: deeply nested JSON, up to 100,000 levels, at every parser",
    .tags(.fuzz),
    .enabled(inTier: .fuzz)
)
struct DeepJSONTests {
    /// The deep documents: the two that made Foundation's JSONScanner trap (SIGILL) here, its 513th level opened by the
    /// last byte (the shape of issue 21's crash); 100,000 arrays inside a member, and 100,000 objects inside each other.
    static let documents: [Data] = [
        Data(String(repeating: "[", count: 513).utf8),
        Data((String(repeating: #"{"a":["#, count: 256) + "[").utf8),
        Data(
            (#"{"keys":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}").utf8
        ),
        Data((String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)).utf8),
        // Opened and never closed: the decoder would meet the depth before the end.
        Data(String(repeating: #"{"a":["#, count: 50_000).utf8),
    ]

    static func answer(_ body: Data, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: body)
    }

    @Test("OpenID Connect discovery refuses it as not a discovery document", arguments: documents)
    func discovery(_ document: Data) async throws {
        let discovery = Discovery(
            transport: CannedTransport(Self.answer(document)),
            timeout: 5,
            logger: CannedTransport.quietLogger
        )
        await #expect(throws: VaultError.self) { try await discovery.metadata(for: DiscoveryFuzzTests.issuer) }
    }

    @Test("SMART discovery refuses it, as the well-known document and as the CapabilityStatement", arguments: documents)
    func smartDiscovery(_ document: Data) async throws {
        let transport = CannedTransport { _ in Self.answer(document) }
        let discovery = SMARTDiscovery(transport: transport, timeout: 5, logger: CannedTransport.quietLogger)
        await #expect(throws: VaultError.self) { try await discovery.configuration(for: DiscoveryFuzzTests.fhirBase) }
        #expect(SMARTDiscovery.oauthURIs(in: document).isEmpty)
    }

    @Test("the issuer's key set refuses it as not a JWK Set", arguments: documents)
    func providerKeys(_ document: Data) async throws {
        let keys = ProviderKeys(
            url: URL(string: "https://issuer.example/jwks")!,
            transport: CannedTransport(Self.answer(document)),
            timeout: 5,
            logger: CannedTransport.quietLogger
        )
        let error = await #expect(throws: VaultError.self) { try await keys.key(id: "k", algorithm: "ES256") }
        #expect(error?.description.contains("not a JWK Set") == true, "\(String(describing: error))")
    }

    static func authenticated(_ response: HTTPResponse) -> AuthenticatedEndpoint {
        AuthenticatedEndpoint(
            url: URL(string: "http://127.0.0.1:9/endpoint")!,
            clientId: "vault",
            authentication: .none,
            supportedMethods: nil,
            now: { Date(timeIntervalSince1970: 1_700_000_000) },
            transport: CannedTransport(response),
            timeout: 5,
            logger: CannedTransport.quietLogger
        )
    }

    @Test("the token endpoint refuses it, as a success and as an error answer", arguments: documents)
    func tokenEndpoint(_ document: Data) async throws {
        for status in [200, 400] {
            let endpoint = TokenEndpoint(
                url: URL(string: "http://127.0.0.1:9/token")!,
                clientId: "vault",
                authentication: .none,
                supportedMethods: nil,
                now: { Date(timeIntervalSince1970: 1_700_000_000) },
                transport: CannedTransport(Self.answer(document, status: status)),
                timeout: 5,
                logger: CannedTransport.quietLogger
            )
            await #expect(throws: VaultError.self) { try await endpoint.refresh("rt-refresh-token-deep") }
        }
        #expect(TokenEndpoint.tokenResponse(from: document) == nil)
    }

    @Test("the introspection endpoint refuses it as not an introspection answer", arguments: documents)
    func introspection(_ document: Data) async throws {
        let endpoint = IntrospectionEndpoint(endpoint: Self.authenticated(Self.answer(document)))
        await #expect(throws: VaultError.self) { try await endpoint.introspect("at", typeHint: nil) }
    }

    @Test("the registration endpoint refuses it, as a registration and as an error answer", arguments: documents)
    func registration(_ document: Data) async throws {
        for status in [201, 400] {
            let endpoint = RegistrationEndpoint(
                transport: CannedTransport(Self.answer(document, status: status)),
                timeout: 5,
                logger: CannedTransport.quietLogger
            )
            await #expect(throws: VaultError.self) {
                try await endpoint.register(
                    at: URL(string: "http://127.0.0.1:9/register")!,
                    DynamicRegistration(methods: [.none]),
                    redirectURI: URL(string: "http://127.0.0.1:8/callback")!,
                    scopes: ["openid"],
                    supportedMethods: nil
                )
            }
        }
    }

    @Test("the key service's answer is refused as not a key", arguments: documents)
    func keyService(_ document: Data) async throws {
        let service = try HTTPKeyService(
            baseURL: URL(string: "http://127.0.0.1:9/keyservice/v1")!,
            transport: CannedTransport(Self.answer(document)),
            logger: CannedTransport.quietLogger
        )
        await #expect(throws: VaultError.self) {
            try await service.getKey(keyId: "k", secret: SecureBytes(Array("c2VjcmV0".utf8)))
        }
    }

    @Test("an envelope file and a sealed record refuse it as damaged", arguments: documents)
    func storage(_ document: Data) throws {
        #expect(throws: VaultError.self) { try Envelope.decode(document, path: "/store/deep.envelope") }
        for payload in [SealedRecord.recordPayload, SealedRecord.clientRecordPayload] {
            let plaintext = SecureBytes(Array(document))
            #expect(SealedRecord.token(from: plaintext, payload: payload, userId: "alice") == nil)
        }
    }

    @Test("the agent's requests and replies refuse it", arguments: documents)
    func agent(_ document: Data) {
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode(AgentRequest.self, from: document)
        }
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode(AgentReply.self, from: document)
        }
    }

    @Test("the CLI's config file refuses it with a CLIError", arguments: documents)
    func configFile(_ document: Data) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "deep-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "config.json").path
        try ConfigFileFuzzTests.create(file, with: Array(document))
        let options = try ConnectionOptions.parse([])
        let error = #expect(throws: CLIError.self) {
            try Settings(options: options, environment: ["CREDENTIAL_VAULT_CONFIG": file, "HOME": directory.path])
        }
        #expect(error?.description.contains("deeper than 64 levels") == true, "\(String(describing: error))")
    }
}
