import Foundation
import Testing
import VaultTestSupport

/// `credential-vault docker-credential` as docker's credential-helpers client runs it (`docker-credential-NAME`,
/// the operation as its argument, the input on standard input), and the docker CLI itself: `docker manifest
/// inspect` against an https registry that takes the token as the password.
@Suite("docker-credential: get answers {ServerURL, Username, Secret}; store, erase and list are honest", .tags(.cli))
struct DockerCredentialTests {
    static let docker = "/usr/local/bin/docker"

    @Test("get, store, erase, list and version, field by field as docker's client parses them")
    func protocolFields() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                let get = try await sandbox.run(["docker-credential", "get"], stdin: "registry.example\n")
                #expect(get.status == 0, "\(get.stderr)")
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [String: Any]
                )
                #expect(object["ServerURL"] as? String == "registry.example")
                #expect(object["Username"] as? String == "oauth2")
                #expect(object["Secret"] as? String == token)
                #expect(object.count == 3)

                let store = try await sandbox.run(
                    ["docker-credential", "store"],
                    stdin: #"{"ServerURL":"registry.example","Username":"u","Secret":"s"}"#
                )
                #expect(store.status == 0 && store.stdout.isEmpty, "\(store.stderr)")
                let erase = try await sandbox.run(["docker-credential", "erase"], stdin: "registry.example\n")
                #expect(erase.status == 0 && erase.stdout.isEmpty, "\(erase.stderr)")
                let list = try await sandbox.run(["docker-credential", "list"])
                #expect(list.stdout == "{}\n")
                let named = try await sandbox.run(
                    ["docker-credential", "--server-url", "registry.example", "list"]
                )
                #expect(named.stdout == #"{"registry.example":"oauth2"}"# + "\n")
            }
            // No agent and no terminal: docker's "not found" line, so docker goes on without credentials.
            let none = try await sandbox.run(["docker-credential", "get"], stdin: "registry.example\n")
            #expect(none.status == 1)
            #expect(none.stdout == "credentials not found in native keychain\n")
            #expect(none.stderr.contains("CREDENTIAL_VAULT_ASKPASS"), "\(none.stderr)")
        }
    }

    @Test("`docker manifest inspect` against an https registry gets the token through the helper")
    func dockerManifestInspect() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.docker), "the docker CLI is on the machine")
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                try await BearerServer.with(mode: "registry", token: token, in: sandbox.root) { server in
                    let registry = "127.0.0.1:\(server.port)"
                    let bin = sandbox.root.appending(path: "bin")
                    let configuration = sandbox.root.appending(path: "docker")
                    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
                    try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
                    let helper = bin.appending(path: "docker-credential-credential-vault")
                    try Data("#!/bin/sh\nexec '\(CLISandbox.vaultBinary.path)' docker-credential \"$@\"\n".utf8)
                        .write(to: helper)
                    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: helper.path)
                    try Data(#"{"credHelpers":{"\#(registry)":"credential-vault"}}"#.utf8)
                        .write(to: configuration.appending(path: "config.json"))
                    var environment = sandbox.environment
                    environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
                    environment["DOCKER_CONFIG"] = configuration.path
                    environment["SSL_CERT_FILE"] = environment["CREDENTIAL_VAULT_CA_FILE"]
                    let result = try await CLISandbox.run(
                        executable: URL(fileURLWithPath: Self.docker),
                        arguments: ["manifest", "inspect", "\(registry)/project:latest"],
                        stdin: "",
                        environment: environment,
                        in: sandbox.root
                    )
                    let served = try String(
                        contentsOf: sandbox.root.appending(path: "bearer-server.port.served"),
                        encoding: .utf8
                    )
                    #expect(
                        served.contains("GET /v2/project/manifests/latest"),
                        "the registry served the manifest to docker with the token: \(served) \(result.stderr)"
                    )
                    #expect(result.status == 0, "\(result.stderr)")
                    #expect(result.stdout.contains("schemaVersion"), "\(result.stdout)")
                    #expect(!result.stderr.contains(token))
                }
                try GitCredentialTests.expectNoFileHolds(token, in: sandbox.root)
            }
        }
    }
}
