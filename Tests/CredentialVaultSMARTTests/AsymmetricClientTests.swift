import CredentialVault
import CredentialVaultSMART
import Foundation
import KeyServiceMock
import Testing

/// A pre-registered `private_key_jwt` client (SMART's client-confidential-asymmetric) against keyservice-mock with
/// SMART's rules (``ClientAssertionRules/smart``: `kid` required, RS384 or ES384 only, `aud` the token endpoint at
/// every endpoint), over real HTTP: the launch, introspection and logout's revocation all authenticate.
@Suite("SMART asymmetric client: kid, RS384/ES384 and aud the token endpoint")
struct AsymmetricClientTests {
    /// Registers a code-flow client with the public half of `authentication`'s key, as an administrator would
    /// before the app runs; its client id.
    static func register(_ fixture: SMARTFixture, _ authentication: ClientAuthentication) async throws -> String {
        let metadata: JSONValue = [
            "client_name": "pre-registered app", "redirect_uris": ["http://127.0.0.1/callback"],
            "token_endpoint_auth_method": "private_key_jwt", "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "jwks": try #require(authentication.publicJWKS),
        ]
        let response = try await TestTLS.transport().send(
            HTTPRequest(
                method: "POST",
                url: fixture.server.registrationEndpoint,
                headers: ["Content-Type": "application/json"],
                body: try JSONEncoder().encode(metadata),
                timeout: 60
            )
        )
        try #require(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
        let answer = try JSONDecoder().decode([String: JSONValue].self, from: response.body)
        return try #require(answer["client_id"]?.stringValue)
    }

    /// A new process of the app: the pre-registered client `clientId` with `authentication`.
    static func client(
        _ fixture: SMARTFixture,
        clientId: String,
        _ authentication: ClientAuthentication
    ) throws -> SMARTClient {
        var configuration = fixture.configuration
        configuration.clientId = clientId
        configuration.clientAuthentication = authentication
        return try SMARTClient(
            fhirBase: fixture.server.fhirBase,
            configuration: configuration,
            transport: fixture.transport
        )
    }

    /// SMART's rules, or those with `algorithms`.
    static func mode(algorithms: [String] = ["RS384", "ES384"]) -> SMARTMode {
        var mode = SMARTMode()
        mode.clientAssertions = ClientAssertionRules(algorithms: algorithms, audienceIsTokenEndpointOnly: true)
        return mode
    }

    @Test(
        "an RSA key (RS384) and a P-384 key (ES384) with a kid: launch, introspection, and logout revokes",
        arguments: [true, false]
    )
    func launchIntrospectLogout(rsa: Bool) async throws {
        try await SMARTFixture.with(smart: Self.mode(), dynamicRegistration: true) { fixture in
            let pem = ClientAuthentication.generatePrivateKey(rsa: rsa)
            let authentication = try ClientAuthentication.privateKeyJWT(pem: pem, keyId: "app-key-1")
            let clientId = try await Self.register(fixture, authentication)
            let app = try Self.client(fixture, clientId: clientId, authentication)
            let context = try await app.authorize { url in await Browser.follow(url) }
            #expect(context.clientId == clientId)
            let token = try await app.getAccessToken()
            let introspection = try await app.vault().auth.introspect()
            #expect(introspection.active)
            try await app.vault().auth.logout()
            // Another process of the same client asks about the old access token: the login is revoked.
            let later = try Self.client(fixture, clientId: clientId, authentication)
            #expect(try await later.vault().auth.introspect(token.token, typeHint: "access_token").active == false)
        }
    }

    @Test("a server that lists only RS384 gets RS384 from an RSA key with no algorithm configured")
    func rs384Only() async throws {
        try await SMARTFixture.with(smart: Self.mode(algorithms: ["RS384"]), dynamicRegistration: true) { fixture in
            let authentication = try ClientAuthentication.privateKeyJWT(
                pem: ClientAuthentication.generatePrivateKey(rsa: true),
                keyId: "rsa-key"
            )
            let clientId = try await Self.register(fixture, authentication)
            let app = try Self.client(fixture, clientId: clientId, authentication)
            _ = try await app.authorize { url in await Browser.follow(url) }
            #expect(try await app.vault().auth.introspect().active)
        }
    }

    @Test("no kid configured: the launch fails with the server's words, which ask for a kid")
    func noKid() async throws {
        try await SMARTFixture.with(smart: Self.mode(), dynamicRegistration: true) { fixture in
            let pem = ClientAuthentication.generatePrivateKey(rsa: false)
            let registered = try ClientAuthentication.privateKeyJWT(pem: pem, keyId: "app-key-1")
            let clientId = try await Self.register(fixture, registered)
            let app = try Self.client(fixture, clientId: clientId, try .privateKeyJWT(pem: pem))
            let error = await #expect(throws: VaultError.self) {
                try await app.authorize { url in await Browser.follow(url) }
            }
            #expect(error?.reason.contains("invalid_client") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("no kid") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("PRIVATE KEY") == false)
        }
    }
}
