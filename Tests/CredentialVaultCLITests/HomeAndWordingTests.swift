import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Small things people notice: `$HOME` is the home directory, a lockout count this device does not know is not
/// given as a number, and the help and README name the tool `credential-vault`.
@Suite(
    "credential-vault: $HOME first, an unknown lockout count is not a number, the tool's name in help and README",
    .tags(.cli)
)
struct HomeAndWordingTests {
    static let password = "correct horse"

    @Test("with HOME set and no XDG variable, status puts the store under $HOME, not the passwd home")
    func homeFirst() async throws {
        try await withSandbox { sandbox in
            let home = sandbox.root.appending(path: "empty-home").path
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
            // Nothing but PATH, HOME and the issuer: every default directory comes from HOME.
            var environment = [
                "PATH": sandbox.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
            ]
            let embedded = try await CLISandbox.run(
                executable: CLISandbox.vaultBinary,
                arguments: ["status", "--json"],
                stdin: "",
                environment: environment,
                in: sandbox.root
            )
            #expect(embedded.status == 0, "\(embedded.stderr)")
            let embeddedStore = try Self.store(embedded.stdout)
            #expect(embeddedStore == home + "/.local/state/credential-vault/store", "\(embeddedStore)")

            environment["CREDENTIAL_VAULT_ISSUER"] = sandbox.environment["CREDENTIAL_VAULT_ISSUER"]
            let configured = try await CLISandbox.run(
                executable: CLISandbox.vaultBinary,
                arguments: ["status", "--json"],
                stdin: "",
                environment: environment,
                in: sandbox.root
            )
            #expect(configured.status == 0, "\(configured.stderr)")
            let store = try Self.store(configured.stdout)
            #expect(store == home + "/.local/share/credential-vault", "\(store)")
        }
    }

    @Test("a wrong password whose count this device lost says the key may already be locked, not how many are left")
    func unknownCount() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            for left in [2, 1] {
                let wrong = try await sandbox.run(["token", "--password-stdin"], stdin: "wrong\n")
                #expect(wrong.status == 65, "\(wrong.stderr)")
                #expect(wrong.stderr.contains("\(left) more wrong password"), "a count known here: \(wrong.stderr)")
            }
            // The count kept here is lost (removed, another device, a restored backup): the key service still has 2.
            for name in sandbox.storeFiles() where name.hasSuffix(".attempts") {
                try FileManager.default.removeItem(at: sandbox.store.appending(path: name))
            }
            let third = try await sandbox.run(["token", "--password-stdin"], stdin: "wrong\n")
            #expect(!third.stderr.contains("more wrong password"), "no number it cannot know: \(third.stderr)")
            #expect(third.stderr.contains("may already have locked it"), "\(third.stderr)")
            // status gives the count it has as a lower bound, and says the key may be locked.
            let status = try await sandbox.run(["status"])
            #expect(status.stdout.contains("at least 1 wrong password"), "\(status.stdout)")
            #expect(status.stdout.contains("may already have locked the key"), "\(status.stdout)")
            let json = try await sandbox.run(["status", "--json"])
            #expect(json.stdout.contains(#""wrongPasswordsCountComplete":false"#), "\(json.stdout)")
            let right = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(right.status == 66, "the key service had locked it indeed: \(right.stderr)")
        }
    }

    @Test("--help calls the tool credential-vault, and the README's completion lines write credential-vault files")
    func toolName() async throws {
        try await withSandbox(withServer: false) { sandbox in
            for arguments in [
                ["--help"], ["exec", "--help"], ["agent", "--help"], ["logout", "--help"], ["token", "--help"],
                ["git-credential", "--help"], ["setup-git", "--help"], ["kubectl-credential", "--help"],
                ["docker-credential", "--help"], ["dpop-proof", "--help"], ["register", "--help"],
            ] {
                let help = try await sandbox.run(arguments)
                #expect(help.status == 0, "\(help.stderr)")
                let text = help.stdout.replacingOccurrences(of: "credential-vault", with: "")
                    .replacingOccurrences(of: "default vault)", with: "")  // the default client id, a value
                #expect(text.firstRange(of: /(^|[^\w-])vault(?![\w-])/) == nil, "\(arguments): \(help.stdout)")
                #expect(
                    help.stdout.firstRange(of: /openID|OpenId|Openid|OPENID/) == nil,
                    "\(arguments): \(help.stdout)"
                )
            }
        }
        let readme = try String(contentsOf: ReadmeTests.packageRoot.appending(path: "README.md"), encoding: .utf8)
        let completions = readme.split(separator: "\n").filter { $0.contains("--generate-completion-script") }
        #expect(completions.count >= 3)
        for line in completions where line.contains(">") {
            #expect(
                line.contains("credential-vault\"") || line.hasSuffix("credential-vault")
                    || line.hasSuffix("credential-vault.fish") || line.hasSuffix("_credential-vault\""),
                "\(line)"
            )
        }
    }

    /// The `store` of a `status --json` answer.
    private static func store(_ json: String) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try #require(object["store"] as? String)
    }
}
