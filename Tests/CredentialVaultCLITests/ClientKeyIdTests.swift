import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `--client-key-id` (env `CREDENTIAL_VAULT_CLIENT_KEY_ID`, config `clientKeyId`) and `clientAssertionAudience`: a
/// pre-registered private key client from the command line, against KeyServiceMock with SMART's assertion rules
/// (`kid` required, RS384 or ES384, `aud` the token endpoint at every endpoint).
@Suite("credential-vault: a pre-registered private key client with --client-key-id", .tags(.cli))
struct ClientKeyIdTests {
    static let password = "client key id password"

    /// A SMART server with dynamic registration (to pre-register the client) and SMART's assertion rules.
    static var strictServer: KeyServiceMockConfiguration {
        var configuration = KeyServiceMockConfiguration()
        var mode = SMARTMode()
        mode.clientAssertions = .smart
        configuration.smart = mode
        configuration.dynamicRegistration = true
        return configuration
    }

    /// Writes a new private key (RSA or P-384) to a 0600 file and registers its public half with `kid`; the file
    /// and the client id.
    static func preRegister(
        _ sandbox: CLISandbox,
        rsa: Bool,
        kid: String
    ) async throws -> (file: URL, clientId: String) {
        let server = try #require(sandbox.server)
        let pem = ClientAuthentication.generatePrivateKey(rsa: rsa)
        let file = sandbox.root.appending(path: "client-key-\(rsa ? "rsa" : "ec").pem")
        try Data(pem.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let jwks = try #require(try ClientAuthentication.privateKeyJWT(pem: pem, keyId: kid).publicJWKS)
        let metadata: JSONValue = [
            "client_name": "pre-registered cli", "redirect_uris": ["http://127.0.0.1/callback"],
            "token_endpoint_auth_method": "private_key_jwt", "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "jwks": jwks,
        ]
        let response = try await sandbox.transport().send(
            HTTPRequest(
                method: "POST",
                url: server.registrationEndpoint,
                headers: ["Content-Type": "application/json"],
                body: try JSONEncoder().encode(metadata),
                timeout: 60
            )
        )
        try #require(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
        let answer = try JSONDecoder().decode([String: JSONValue].self, from: response.body)
        return (file, try #require(answer["client_id"]?.stringValue))
    }

    @Test(
        "RS384 and ES384 keys with --client-key-id: launch, introspect, and logout revokes",
        arguments: [true, false]
    )
    func launchIntrospectLogout(rsa: Bool) async throws {
        try await withSandbox(server: Self.strictServer) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let (file, clientId) = try await Self.preRegister(sandbox, rsa: rsa, kid: "cli-key")
            let client = ["--fhir", fhir, "--client-id", clientId, "--client-key-file", file.path]
            let launch = try await sandbox.run(
                ["smart", "launch", "--unattended", "--password-stdin", "--client-key-id", "cli-key"] + client,
                stdin: "\(Self.password)\n"
            )
            #expect(launch.status == 0, "\(launch.stderr)")
            // The key id from the environment this time.
            let introspect = try await sandbox.run(
                ["smart", "introspect", "--password-stdin"] + client,
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_CLIENT_KEY_ID": "cli-key"]
            )
            #expect(introspect.status == 0, "\(introspect.stderr)")
            let answer = try JSONSerialization.jsonObject(with: Data(introspect.stdout.utf8)) as? [String: Any]
            #expect(answer?["active"] as? Bool == true, "\(introspect.stdout)")
            let logout = try await sandbox.run(
                ["logout", "--password-stdin", "--client-key-id", "cli-key"] + client,
                stdin: "\(Self.password)\n"
            )
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(logout.stdout.contains("the issuer revoked it"), "\(logout.stdout)")
            #expect(!(launch.stderr + introspect.stderr + logout.stderr).contains("PRIVATE KEY"))
        }
    }

    @Test("without --client-key-id the launch fails with the server's words asking for a kid")
    func noKid() async throws {
        try await withSandbox(server: Self.strictServer) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let (file, clientId) = try await Self.preRegister(sandbox, rsa: false, kid: "cli-key")
            let launch = try await sandbox.run(
                [
                    "smart", "launch", "--unattended", "--password-stdin", "--fhir", fhir, "--client-id", clientId,
                    "--client-key-file", file.path,
                ],
                stdin: "\(Self.password)\n"
            )
            #expect(launch.status != 0)
            #expect(launch.stderr.contains("no kid"), "\(launch.stderr)")
        }
    }

    @Test("a key id or assertion audience without a key file, or an unknown audience, is a configuration error")
    func misconfigured() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let issuer = ["--issuer", "https://issuer.example/realms/x"]
            let lone = try await sandbox.run(
                ["token", "--password-stdin", "--client-key-id", "k"] + issuer,
                stdin: "x\n"
            )
            #expect(lone.status == 78, "\(lone.stderr)")
            #expect(lone.stderr.contains("client-key-id"), "\(lone.stderr)")
            let file = sandbox.root.appending(path: "key.pem")
            try Data(ClientAuthentication.generatePrivateKey(rsa: false).utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            let audience = try await sandbox.run(
                ["token", "--password-stdin", "--client-key-file", file.path] + issuer,
                stdin: "x\n",
                environment: ["CREDENTIAL_VAULT_CLIENT_ASSERTION_AUDIENCE": "everyone"]
            )
            #expect(audience.status == 78, "\(audience.stderr)")
            #expect(audience.stderr.contains("tokenEndpoint or issuer"), "\(audience.stderr)")
            let config = try await sandbox.run(["config", "--client-key-id", "from-flag"] + issuer)
            #expect(config.stdout.contains("client-key-id") && config.stdout.contains("from-flag"), "\(config.stdout)")
        }
    }
}
