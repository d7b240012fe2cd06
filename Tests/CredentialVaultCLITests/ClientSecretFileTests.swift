import Foundation
import Testing
import VaultTestSupport

/// A confidential client's secret or private key never sits in the config file: `credential-vault` reads it from a file of
/// its own that only its owner can read, and refuses one its group or others can.
@Suite("credential-vault: client secret and key files must be 0600", .tags(.cli))
struct ClientSecretFileTests {
    static func writeSecret(in sandbox: CLISandbox, mode: Int) throws -> URL {
        let file = sandbox.root.appending(path: "client-secret")
        try Data("the-client-secret\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        return file
    }

    @Test(
        "a secret file its group or others can read is refused (exit 78) with the chmod to run, the secret unsaid",
        arguments: ["--client-secret-file", "--client-key-file"]
    )
    func readableByOthers(flag: String) async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeSecret(in: sandbox, mode: 0o644)
            let result = try await sandbox.run(
                ["token", "--password-stdin", "--issuer", "https://issuer.example/realms/x", flag, file.path],
                stdin: "correct horse\n"
            )
            #expect(result.status == 78, "\(result.stderr)")
            #expect(result.stderr.contains("chmod 600 \(file.path)"), "\(result.stderr)")
            #expect(!result.stderr.contains("the-client-secret") && !result.stdout.contains("the-client-secret"))
        }
    }

    @Test("a 0600 secret file is read: the command goes on to its next step (no stored login here: exit 67)")
    func ownerOnly() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeSecret(in: sandbox, mode: 0o600)
            let result = try await sandbox.run(
                [
                    "token", "--password-stdin", "--issuer", "https://issuer.example/realms/x",
                    "--client-secret-file", file.path,
                ],
                stdin: "correct horse\n"
            )
            #expect(result.status == 67, "\(result.stderr)")
            #expect(!result.stderr.contains("the-client-secret"))
        }
    }

    @Test("a private key file that holds no RSA or P-256 key is a configuration error")
    func notAKey() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeSecret(in: sandbox, mode: 0o600)
            let result = try await sandbox.run(
                [
                    "token", "--password-stdin", "--issuer", "https://issuer.example/realms/x",
                    "--client-key-file", file.path,
                ],
                stdin: "correct horse\n"
            )
            #expect(result.status == 78, "\(result.stderr)")
            #expect(result.stderr.contains("private key"), "\(result.stderr)")
        }
    }
}
