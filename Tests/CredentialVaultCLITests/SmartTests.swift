import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `credential-vault smart launch`, `credential-vault smart context` and `credential-vault fhir get` over the built binary, each a new process,
/// against KeyServiceMock's SMART mode.
@Suite("credential-vault smart and vault fhir", .tags(.cli))
struct SmartTests {
    static let password = "smart cli password"

    static var smartServer: KeyServiceMockConfiguration {
        var configuration = KeyServiceMockConfiguration()
        configuration.smart = SMARTMode()
        return configuration
    }

    @Test("a standalone launch, then the same context in a new process after the password, and every patient")
    func standalone() async throws {
        try await withSandbox(server: Self.smartServer) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let launch = try await sandbox.run(
                ["smart", "launch", "--fhir", fhir, "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(launch.status == 0, "\(launch.stderr)")
            #expect(launch.stdout.contains("patient"), "\(launch.stdout)")
            #expect(launch.stdout.contains("Registered"))

            let context = try await sandbox.run(
                ["smart", "context", "--json", "--fhir", fhir, "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(context.status == 0, "\(context.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(context.stdout.utf8)) as? [String: Any])
            #expect(json["patient"] as? String == "p1")
            #expect(json["fhirBase"] as? String == fhir)
            #expect(json["fhirUser"] as? String == "Patient/p1")
            #expect(json["launch"] as? String == "standalone")
            #expect(json["scope"] as? String == "launch/patient openid fhirUser offline_access patient/*.rs")
            #expect((json["additionalFields"] as? [String: Any])?["x-mock-site"] != nil)

            let introspect = try await sandbox.run(
                ["smart", "introspect", "--fhir", fhir, "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(introspect.status == 0, "\(introspect.stderr)")
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(introspect.stdout.utf8)) as? [String: Any]
            )
            #expect(answer["active"] as? Bool == true)

            let all = try await sandbox.run(
                ["fhir", "get", "Patient?_count=5", "--all-pages", "--fhir", fhir, "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(all.status == 0, "\(all.stderr)")
            let bundle = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
            let entries = try #require(bundle["entry"] as? [[String: Any]])
            let ids = entries.compactMap { ($0["resource"] as? [String: Any])?["id"] as? String }
            #expect(ids == (1...12).map { "p\($0)" })
        }
    }

    @Test("an EHR launch with --launch and --iss keeps the EHR's patient and encounter; a foreign iss is refused")
    func ehrLaunch() async throws {
        try await withSandbox(server: Self.smartServer) { sandbox in
            let server = try #require(sandbox.server)
            let fhir = server.fhirBase.absoluteString
            let foreign = try await sandbox.run(
                [
                    "smart", "launch", "--fhir", fhir, "--launch", "x", "--iss", "https://ehr.example/fhir",
                    "--unattended", "--password-stdin",
                ],
                stdin: "\(Self.password)\n"
            )
            #expect(foreign.status != 0)
            #expect(foreign.stderr.contains("ehr.example"), "\(foreign.stderr)")

            let id = server.createEHRLaunch(patient: "p4", encounter: "e9")
            let launch = try await sandbox.run(
                // `--launch=ID`: an EHR's launch id may begin with `-`, which a separate argument would read as an option.
                [
                    "smart", "launch", "--fhir", fhir, "--launch=\(id)", "--iss", fhir, "--unattended",
                    "--password-stdin",
                ],
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_SCOPES": "launch openid fhirUser offline_access user/*.rs"]
            )
            #expect(launch.status == 0, "\(launch.stderr)")
            let context = try await sandbox.run(
                ["smart", "context", "--json", "--fhir", fhir, "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(context.status == 0, "\(context.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(context.stdout.utf8)) as? [String: Any])
            #expect(json["patient"] as? String == "p4")
            #expect(json["encounter"] as? String == "e9")
            #expect(json["launch"] as? String == "ehr")
            #expect(json["intent"] as? String == "reconcile-medications")
        }
    }

    @Test("register with a FHIR server configured is a SMART launch, so every hint that says register holds")
    func registerLaunches() async throws {
        try await withSandbox(server: Self.smartServer) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_FHIR": fhir]
            )
            #expect(register.status == 0, "\(register.stderr)")
            let context = try await sandbox.run(
                ["smart", "context", "--json", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_FHIR": fhir]
            )
            let json = try #require(try JSONSerialization.jsonObject(with: Data(context.stdout.utf8)) as? [String: Any])
            #expect(json["patient"] as? String == "p1")
            let config = try await sandbox.run(["config"], environment: ["CREDENTIAL_VAULT_FHIR": fhir])
            #expect(config.stdout.contains("launch/patient openid fhirUser offline_access patient/*.rs"))
            #expect(config.stdout.contains(fhir))
        }
    }

    @Test("a server found only through its CapabilityStatement: the scopes and user are checked before any browser")
    func legacyServer() async throws {
        var configuration = Self.smartServer
        configuration.smart?.discovery = .capabilityStatementOnly
        try await withSandbox(server: configuration) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let refused = try await sandbox.run(
                ["smart", "launch", "--fhir", fhir, "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(refused.status == 78)
            #expect(refused.stderr.contains("CREDENTIAL_VAULT_SCOPES") && refused.stderr.contains("--user"))
            #expect(!refused.stderr.contains("Launched"), "refused before the browser")

            let launch = try await sandbox.run(
                ["smart", "launch", "--fhir", fhir, "--user", "alice", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_SCOPES": "launch/patient offline_access patient/*.rs"]
            )
            #expect(launch.status == 0, "\(launch.stderr)")
            #expect(launch.stdout.contains("Registered alice"))
        }
    }

    @Test("a backend service at the terminal: its JWKS, a token, and fhir get with the key instead of a login")
    func backendService() async throws {
        let pem = ClientAuthentication.generatePrivateKey(rsa: false)
        let key = try ClientAuthentication.privateKeyJWT(pem: pem, keyId: "k1", algorithm: "ES384")
        let jwks = String(decoding: try JSONEncoder().encode(try #require(key.publicJWKS)), as: UTF8.self)
        var configuration = Self.smartServer
        configuration.smart?.backendClients = [RegisteredBackendClient(clientId: "svc", jwks: jwks)]
        try await withSandbox(server: configuration) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let keyFile = sandbox.root.appending(path: "service.pem")
            try Data(pem.utf8).write(to: keyFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
            let options = ["--fhir", fhir, "--client-id", "svc", "--key", keyFile.path, "--key-id", "k1"]

            let printed = try await sandbox.run(["smart", "backend", "--jwks"] + options)
            #expect(printed.status == 0, "\(printed.stderr)")
            #expect(printed.stdout.contains("\"ES384\"") && !printed.stdout.contains("\"d\""))

            let token = try await sandbox.run(["smart", "backend", "--json"] + options)
            #expect(token.status == 0, "\(token.stderr)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(token.stdout.utf8)) as? [String: Any])
            #expect(answer["scope"] as? String == "system/*.rs")

            let all = try await sandbox.run(["fhir", "get", "Patient?_count=5", "--all-pages"] + options)
            #expect(all.status == 0, "\(all.stderr)")
            let bundle = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
            #expect((bundle["entry"] as? [Any])?.count == 12)
        }
    }

    @Test("an empty client id registers the app (RFC 7591); later processes reuse it, show it and rotate its key")
    func dynamicRegistration() async throws {
        var configuration = Self.smartServer
        configuration.dynamicRegistration = true
        try await withSandbox(server: configuration) { sandbox in
            let server = try #require(sandbox.server)
            let environment = [
                "CREDENTIAL_VAULT_FHIR": server.fhirBase.absoluteString, "CREDENTIAL_VAULT_CLIENT_ID": "",
            ]
            let register = try await sandbox.run(
                ["register", "--client-id", "", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: environment
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(server.registrationRequests == 1)

            let shown = try await sandbox.run(
                ["smart", "client", "--client-id", "", "--json", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: environment
            )
            #expect(shown.status == 0, "\(shown.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            let clientId = try #require(json["clientId"] as? String)
            #expect(json["method"] as? String == "private_key_jwt")
            let keyIds = try #require(json["keyIds"] as? [String])
            #expect(server.registeredClient(clientId)?.keyIds == keyIds)
            #expect(!shown.stdout.contains("PRIVATE") && !shown.stderr.contains("PRIVATE"))

            let rotated = try await sandbox.run(
                ["smart", "client", "--client-id", "", "--rotate-key", "--jwks", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: environment
            )
            #expect(rotated.status == 0, "\(rotated.stderr)")
            let jwks = try #require(try JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: Any])
            let newIds = try #require(jwks["keys"] as? [[String: Any]]).compactMap { $0["kid"] as? String }
            #expect(newIds.count == 1 && newIds != keyIds)
            #expect(server.registeredClient(clientId)?.keyIds == newIds)
            #expect(!rotated.stdout.contains("\"d\""))

            let read = try await sandbox.run(
                ["fhir", "get", "Patient/p1", "--client-id", "", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: environment
            )
            #expect(read.status == 0, "\(read.stderr)")
            #expect(server.registrationRequests == 1)
        }
    }

    @Test("a 403 from the FHIR server says the scope does not cover it")
    func forbidden() async throws {
        var configuration = Self.smartServer
        configuration.smart?.grantedScope = "launch/patient openid fhirUser offline_access patient/Observation.rs"
        try await withSandbox(server: configuration) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            let launch = try await sandbox.run(
                ["smart", "launch", "--fhir", fhir, "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(launch.status == 0, "\(launch.stderr)")
            let read = try await sandbox.run(
                ["fhir", "get", "Patient/p1", "--fhir", fhir, "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(read.status == 79)
            #expect(read.stderr.contains("scope does not cover"), "\(read.stderr)")
        }
    }
}
