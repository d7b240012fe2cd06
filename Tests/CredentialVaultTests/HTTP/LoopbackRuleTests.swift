import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

/// RFC 8252 section 8.3: secrets go over https, or over plain http only to a loopback IP literal. The rule is
/// the same for the issuer, the key service and every endpoint discovery names; only a redirect URI may also
/// use the name `localhost`.
@Suite("the one loopback rule: plain http only to a loopback IP literal")
struct LoopbackRuleTests {
    /// Plain http to hosts that are not a loopback IP literal, however much they look like one.
    static let refusedHTTP = [
        "http://127.0.0.1.attacker.example",
        "http://127.0.0.1@attacker.example",
        "http://localhost:8080",
        "http://[::ffff:127.0.0.1]",
        "http://0x7f.0.0.1",
        "http://127.1",
        "http://keys.example.com",
    ]
    /// Plain http to loopback IP literals: anywhere in 127.0.0.0/8, and ::1.
    static let acceptedHTTP = [
        "http://127.0.0.1:8080",
        "http://127.255.255.254",
        "http://[::1]:8080",
        "HTTP://127.0.0.1",
    ]
    /// https to any host, names that look like loopback included: TLS checks the name.
    static let acceptedHTTPS = [
        "https://127.0.0.1.attacker.example",
        "https://localhost",
        "https://keys.example.com:8443",
    ]
    static let httpsIssuer = URL(string: "https://issuer.example/auth/realms/demo")!

    static func configuration(issuer: URL, keyService: URL, directory: URL? = nil) -> VaultConfiguration {
        VaultConfiguration(
            issuer: issuer,
            clientId: "vault",
            keyServiceURL: keyService,
            storeDirectory: directory,
            opsLimit: VaultFixture.opsLimit,
            memLimitBytes: VaultFixture.memLimitBytes
        )
    }

    @Test("Vault(configuration:) refuses such an issuer with insecureURL, naming it", arguments: refusedHTTP)
    func issuerRefusedByVault(_ text: String) throws {
        let issuer = try #require(URL(string: text))
        let error = #expect(throws: VaultError.self) {
            try Vault(
                configuration: Self.configuration(
                    issuer: issuer,
                    keyService: TIMLayout.keyServiceURL(issuer: Self.httpsIssuer)
                )
            )
        }
        #expect(error?.kind == .insecureURL)
        #expect(error?.isConfigurationError == true)
        #expect(error?.description.contains(issuer.absoluteString) == true, "\(String(describing: error))")
    }

    @Test("an Auth built directly refuses such an issuer at metadata(), before any request", arguments: refusedHTTP)
    func issuerRefusedByAuth(_ text: String) async throws {
        let issuer = try #require(URL(string: text))
        try await TemporaryDirectory.with { root in
            let transport = CountingTransport()
            let configuration = Self.configuration(
                issuer: issuer,
                keyService: TIMLayout.keyServiceURL(issuer: Self.httpsIssuer),
                directory: root.appending(path: "store")
            )
            let storage = UserStorage(
                keyService: try HTTPKeyService(baseURL: configuration.keyServiceURL, transport: transport),
                directory: configuration.storeDirectory
            )
            let auth = Auth(configuration: configuration, userStorage: storage, transport: transport)
            let error = await #expect(throws: VaultError.self) { try await auth.metadata() }
            #expect(error?.kind == .insecureURL)
            #expect(error?.description.contains(issuer.absoluteString) == true, "\(String(describing: error))")
            #expect(transport.count(endingWith: "") == 0)
        }
    }

    @Test(
        "such a key service is refused with insecureURL, naming it, by HTTPKeyService and by Vault",
        arguments: refusedHTTP
    )
    func keyServiceRefused(_ text: String) throws {
        let base = try #require(URL(string: text))
        let url = base.appending(path: "auth/realms/demo/keyservice/v1")
        let direct = #expect(throws: VaultError.self) { try HTTPKeyService(baseURL: url) }
        #expect(direct?.kind == .insecureURL)
        #expect(direct?.host == url.host)
        #expect(direct?.description.contains(url.absoluteString) == true, "\(String(describing: direct))")
        let byVault = #expect(throws: VaultError.self) {
            try Vault(configuration: Self.configuration(issuer: Self.httpsIssuer, keyService: url))
        }
        #expect(byVault?.kind == .insecureURL)
        #expect(byVault?.description.contains(url.absoluteString) == true, "\(String(describing: byVault))")
    }

    @Test(
        "http to a loopback literal and https to any host are accepted as issuer and key service",
        arguments: acceptedHTTP + acceptedHTTPS
    )
    func accepted(_ text: String) throws {
        let base = try #require(URL(string: text))
        let issuer = TIMLayout.issuer(server: base, realm: "demo")
        let keyService = TIMLayout.keyServiceURL(issuer: issuer)
        _ = try HTTPKeyService(baseURL: keyService)
        _ = try HTTPKeyService(server: base, realm: "demo")
        let vault = try Vault(configuration: Self.configuration(issuer: issuer, keyService: keyService))
        #expect(vault.configuration.issuer == issuer)
    }

    @Test("localhost, refused for the issuer, is accepted as a redirect host and sent as configured")
    func localhostRedirect() async throws {
        var mock = KeyServiceMockConfiguration()
        mock.clients = [MockClient(clientId: "vault", redirectURIs: ["http://localhost/callback"])]
        try await KeyServiceMockServer.withServer(mock) { server in
            try await TemporaryDirectory.with { root in
                let vault = try Vault(
                    configuration: VaultConfiguration(
                        issuer: server.issuer,
                        clientId: "vault",
                        redirectURI: URL(string: "http://localhost/callback")!,
                        keyServiceURL: server.keyServiceURL,
                        storeDirectory: root.appending(path: "store")
                    )
                )
                let presented = URLBox()
                let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    presented.set(url)
                    await Browser.follow(url)
                }
                #expect(userId == "demo-user")
                let url = try #require(presented.get())
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let redirect = try #require(
                    items.first { $0.name == "redirect_uri" }?.value.flatMap(URL.init(string:))
                )
                // The listener is on 127.0.0.1 (and ::1 where it can be) at the chosen port, and the URI the
                // issuer sees keeps the configured host: issuers that match exactly see what was registered.
                #expect(redirect.host == "localhost" && (redirect.port ?? 0) > 0 && redirect.path == "/callback")
            }
        }
    }
}

@Suite("discovered endpoints follow the loopback rule")
struct DiscoveredEndpointTests {
    static let issuer = "https://issuer.example/realms/demo"
    static let secureDocument = [
        "issuer": issuer,
        "authorization_endpoint": "\(issuer)/authorize",
        "token_endpoint": "http://127.0.0.1:8080/token",
        "revocation_endpoint": "\(issuer)/revoke",
        "end_session_endpoint": "\(issuer)/logout",
    ]

    static func auth(answering document: [String: String], in root: URL) throws -> Auth {
        let configuration = VaultConfiguration(
            issuer: URL(string: issuer)!,
            clientId: "vault",
            keyServiceURL: URL(string: "\(issuer)/keyservice/v1")!,
            storeDirectory: root.appending(path: "store")
        )
        let transport = DiscoveryDocumentTransport(document: document)
        let storage = UserStorage(
            keyService: try HTTPKeyService(baseURL: configuration.keyServiceURL, transport: transport),
            directory: configuration.storeDirectory
        )
        return Auth(configuration: configuration, userStorage: storage, transport: transport)
    }

    @Test("https endpoints and http to a loopback literal are taken as discovered")
    func secureEndpoints() async throws {
        try await TemporaryDirectory.with { root in
            let metadata = try await Self.auth(answering: Self.secureDocument, in: root).metadata()
            #expect(metadata.tokenEndpoint.absoluteString == "http://127.0.0.1:8080/token")
            #expect(metadata.authorizationEndpoint.absoluteString == "\(Self.issuer)/authorize")
            #expect(metadata.revocationEndpoint?.absoluteString == "\(Self.issuer)/revoke")
        }
    }

    @Test(
        "an endpoint that is plain http to another host fails discovery with insecureURL, naming it",
        arguments: ["authorization_endpoint", "token_endpoint", "revocation_endpoint", "end_session_endpoint"]
    )
    func insecureEndpoint(_ name: String) async throws {
        let insecure = "http://127.0.0.1.attacker.example/\(name)"
        var document = Self.secureDocument
        document[name] = insecure
        try await TemporaryDirectory.with { root in
            let error = await #expect(throws: VaultError.self) {
                try await Self.auth(answering: document, in: root).metadata()
            }
            #expect(error?.kind == .insecureURL)
            #expect(error?.isConfigurationError == true)
            #expect(error?.description.contains(insecure) == true, "\(String(describing: error))")
        }
    }
}

/// Answers the OpenID Connect discovery request with a fixed document and anything else with 404: the
/// document's content is what these tests are about, not how it travels.
private struct DiscoveryDocumentTransport: HTTPTransport {
    let document: [String: String]

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        guard request.url.path.hasSuffix("/.well-known/openid-configuration"),
            let body = try? JSONEncoder().encode(document)
        else { return HTTPResponse(status: 404) }
        return HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: body)
    }
}
