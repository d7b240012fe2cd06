import Foundation
import Testing
import VaultTestSupport

/// A helper with no agent and no terminal: the password through `CREDENTIAL_VAULT_ASKPASS` (or `SSH_ASKPASS`), and
/// one clear line with exit 77 when neither is set.
@Suite(
    "askpass: a helper without an agent or a terminal asks a program for the password, or says how to go on",
    .tags(.cli)
)
struct AskpassTests {
    @Test("no agent, no terminal, no askpass: one line naming the ways on, exit 77, nothing on standard output")
    func nothingToAsk() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            let git = try await sandbox.run(["git-credential", "get"], stdin: "protocol=https\nhost=git.example\n\n")
            #expect(git.status == 77, "\(git.stderr)")
            #expect(git.stdout.isEmpty)
            #expect(git.stderr.split(separator: "\n").count == 1, "\(git.stderr)")
            #expect(git.stderr.contains("CREDENTIAL_VAULT_ASKPASS") && git.stderr.contains("credential-vault agent"))
            let kube = try await sandbox.run(["kubectl-credential"])
            #expect(kube.status == 77, "\(kube.stderr)")
            #expect(kube.stdout.isEmpty)
        }
    }

    @Test("CREDENTIAL_VAULT_ASKPASS, else SSH_ASKPASS, gives the password; a failing program gives none")
    func askpassProgram() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            let program = sandbox.root.appending(path: "askpass.sh")
            // The prompt arrives as the program's argument; the password goes to its standard output.
            try Data("#!/bin/sh\ncase \"$1\" in Password*) echo '\(AgentTests.password)' ;; *) exit 3 ;; esac\n".utf8)
                .write(to: program)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: program.path)
            for variable in ["CREDENTIAL_VAULT_ASKPASS", "SSH_ASKPASS"] {
                let git = try await sandbox.run(
                    ["git-credential", "get"],
                    stdin: "protocol=https\nhost=git.example\n\n",
                    environment: [variable: program.path]
                )
                #expect(git.status == 0, "\(variable): \(git.stderr)")
                #expect(git.stdout.contains("password="), "\(variable)")
            }
            let token = try await sandbox.run(["token"], environment: ["CREDENTIAL_VAULT_ASKPASS": program.path])
            #expect(token.status == 64, "token keeps to the terminal and --password-stdin: \(token.stderr)")
            let failing = try await sandbox.run(
                ["kubectl-credential"],
                environment: ["CREDENTIAL_VAULT_ASKPASS": "/bin/false"]
            )
            #expect(failing.status == 77, "\(failing.stderr)")
            #expect(failing.stderr.contains("no password"), "\(failing.stderr)")
        }
    }
}
