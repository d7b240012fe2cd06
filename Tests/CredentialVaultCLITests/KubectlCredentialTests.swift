import CredentialVault
import Foundation
import Testing
import VaultTestSupport

/// `credential-vault kubectl-credential` run by kubectl 1.32 itself (an exec credential plugin in a kubeconfig)
/// against an https server that answers only the agent's token; the ExecCredential's fields as kubectl reads them.
@Suite("kubectl-credential: kubectl runs the plugin and sends the agent's token as a Bearer token", .tags(.cli))
struct KubectlCredentialTests {
    static let kubectl = "/usr/bin/kubectl"

    @Test("`kubectl get --raw /version` through the plugin, for exec apiVersion v1 and v1beta1")
    func kubectlRunsThePlugin() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.kubectl), "kubectl 1.32 is on the machine image")
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                try await BearerServer.with(mode: "kube", token: token, in: sandbox.root) { server in
                    for version in ["v1", "v1beta1"] {
                        let kubeconfig = try Self.writeKubeconfig(sandbox, port: server.port, version: version)
                        let result = try await CLISandbox.run(
                            executable: URL(fileURLWithPath: Self.kubectl),
                            arguments: ["--kubeconfig", kubeconfig.path, "get", "--raw", "/version"],
                            stdin: "",
                            environment: sandbox.environment,
                            in: sandbox.root
                        )
                        #expect(result.status == 0, "\(version): \(result.stderr)")
                        #expect(result.stdout.contains("bearer-checked"), "\(version): \(result.stdout)")
                        #expect(!result.stderr.contains(token))
                    }
                }
                try GitCredentialTests.expectNoFileHolds(token, in: sandbox.root)
            }
        }
    }

    @Test("the ExecCredential: apiVersion from KUBERNETES_EXEC_INFO, kind, status.token, RFC 3339 expiry")
    func execCredentialFields() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                for version in ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"] {
                    let info = #"{"apiVersion":"\#(version)","kind":"ExecCredential","spec":{"interactive":false}}"#
                    let result = try await sandbox.run(
                        ["kubectl-credential"],
                        environment: ["KUBERNETES_EXEC_INFO": info]
                    )
                    #expect(result.status == 0, "\(result.stderr)")
                    let object = try #require(
                        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                    )
                    #expect(object["apiVersion"] as? String == version)
                    #expect(object["kind"] as? String == "ExecCredential")
                    let status = try #require(object["status"] as? [String: Any])
                    #expect(status["token"] as? String == token)
                    let expiry = try #require(status["expirationTimestamp"] as? String)
                    let formatter = ISO8601DateFormatter()
                    let date = try #require(formatter.date(from: expiry), "RFC 3339: \(expiry)")
                    #expect(date > Date(), "the token is not expired")
                    #expect(expiry.hasSuffix("Z"))
                    let exp = try #require(try JWT(token: token).expireDate)
                    #expect(
                        expiry
                            == formatter.string(
                                from: Date(timeIntervalSince1970: exp.timeIntervalSince1970.rounded(.down))
                            ),
                        "the token's exp, in whole seconds, UTC"
                    )
                }
                let unknown = try await sandbox.run(
                    ["kubectl-credential"],
                    environment: ["KUBERNETES_EXEC_INFO": #"{"apiVersion":"client.authentication.k8s.io/v2"}"#]
                )
                #expect(unknown.status == 64, "\(unknown.stderr)")
                #expect(unknown.stdout.isEmpty)
            }
        }
    }

    /// A kubeconfig whose user runs the built binary as its exec plugin, in `exec` apiVersion `version`.
    static func writeKubeconfig(_ sandbox: CLISandbox, port: Int, version: String) throws -> URL {
        let authority = sandbox.environment["CREDENTIAL_VAULT_CA_FILE"] ?? ""
        let text = """
            apiVersion: v1
            kind: Config
            clusters:
            - name: test
              cluster:
                server: https://127.0.0.1:\(port)
                certificate-authority: \(authority)
            users:
            - name: test
              user:
                exec:
                  apiVersion: client.authentication.k8s.io/\(version)
                  command: \(CLISandbox.vaultBinary.path)
                  args: ["kubectl-credential"]
                  interactiveMode: Never
            contexts:
            - name: test
              context:
                cluster: test
                user: test
            current-context: test

            """
        let url = sandbox.root.appending(path: "kubeconfig-\(version)")
        try Data(text.utf8).write(to: url)
        return url
    }
}
