import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The commands that need no login, the embedded default and the demo.
@Suite("credential-vault: decode, config, embedded default, demo, help", .tags(.cli))
struct ToolTests {
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static let sampleToken =
        base64URL(#"{"alg":"HS256","typ":"JWT"}"#) + "."
        + base64URL(#"{"sub":"alice","iss":"https://issuer.example","exp":4102444800,"roles":["a","b"]}"#) + "."
        + base64URL("not a real signature")

    @Test("decode reads an argument or standard input and says the signature is not checked")
    func decode() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let argument = try await sandbox.run(["decode", Self.sampleToken])
            #expect(argument.status == 0, "\(argument.stderr)")
            #expect(argument.stdout.contains("signature is NOT checked"))
            #expect(argument.stdout.contains("alice"))
            #expect(argument.stdout.contains("HS256"))
            #expect(argument.stdout.contains("2100-01-01") || argument.stdout.contains("2099-12-31"))

            let stdin = try await sandbox.run(["decode"], stdin: Self.sampleToken + "\n")
            #expect(stdin.status == 0, "\(stdin.stderr)")
            #expect(stdin.stdout == argument.stdout)

            let json = try await sandbox.run(["decode", "--json", "-"], stdin: Self.sampleToken)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["signatureChecked"] as? Bool == false)
            #expect((object["claims"] as? [String: Any])?["sub"] as? String == "alice")

            let garbage = try await sandbox.run(["decode", "not.a-token"])
            #expect(garbage.status == 70)
            #expect(garbage.stderr.contains("not a JWT"))
            #expect(!sandbox.storeFiles().contains { _ in true }, "decode touches no store")
        }
    }

    @Test("decode --json prints every number exactly as the token wrote it: 2^70 stays 1180591620717411303424")
    func decodeExactNumbers() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let numbers = [
                #""big":1180591620717411303424"#, #""bigger":1180591620717411303425"#,
                #""negative":-9223372036854775809"#, #""exp":4102444800"#, #""fraction":0.1"#, #""small":-0"#,
                #""nested":{"list":[18446744073709551616,1]}"#,
            ]
            let token =
                Self.base64URL(#"{"alg":"HS256","n":12345678901234567890}"#) + "."
                + Self.base64URL(#"{"sub":"alice","# + numbers.joined(separator: ",") + "}") + "."
                + Self.base64URL("signature")
            let result = try await sandbox.run(["decode", "--json", token])
            #expect(result.status == 0, "\(result.stderr)")
            for number in numbers + [#""n":12345678901234567890"#] {
                #expect(result.stdout.contains(number), "\(number) is not in \(result.stdout)")
            }
            #expect(!result.stdout.contains("e+"), "\(result.stdout)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            )
            #expect(object["signatureChecked"] as? Bool == false)
        }
    }

    @Test("decode - says standard input exceeded its 32 KiB cap, not that the token is that long")
    func decodeStandardInputCap() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let long = try await sandbox.run(["decode", "-"], stdin: String(repeating: "a", count: 100_000))
            #expect(long.status == 70)
            #expect(long.stderr.contains("standard input exceeded the stdin cap of 32 KiB"), "\(long.stderr)")
            #expect(!long.stderr.contains("the token is"), "\(long.stderr)")

            // Within the cap, a token past its own limit is still reported by its size.
            let tooLong = try await sandbox.run(["decode", "-"], stdin: String(repeating: "a", count: 20_000))
            #expect(tooLong.status == 70)
            #expect(tooLong.stderr.contains("the token is 20000 bytes"), "\(tooLong.stderr)")
        }
    }

    @Test("config shows each value and its source: flag over environment over config file")
    func configSources() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let folder = sandbox.root.appending(path: "config/credential-vault")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appending(path: "config.json")
            try Data(
                #"{"issuer": "https://file.example/realms/x", "user": "from-file", "clientId": "file-client"}"#.utf8
            )
            .write(to: file)
            let result = try await sandbox.run(
                ["config", "--json", "--client-id", "flag-client"],
                environment: ["CREDENTIAL_VAULT_USER": "from-env", "CREDENTIAL_VAULT_STORE": "/tmp/somewhere"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            )
            func entry(_ name: String) -> (value: String?, source: String?) {
                let row = object[name] as? [String: Any]
                return (row?["value"] as? String, row?["source"] as? String)
            }
            #expect(entry("issuer").value == "https://file.example/realms/x")
            #expect(entry("issuer").source == "config file \(file.path)")
            #expect(entry("key-service").value == "https://file.example/realms/x/keyservice/v1")
            #expect(entry("key-service").source == "derived from the issuer")
            #expect(entry("user").value == "from-env")
            #expect(entry("user").source == "environment CREDENTIAL_VAULT_USER")
            #expect(entry("client-id").value == "flag-client")
            #expect(entry("client-id").source == "flag --client-id")
            #expect(entry("store").source == "environment CREDENTIAL_VAULT_STORE")
            #expect(entry("scopes").source == "default")

            let table = try await sandbox.run(["config"])
            #expect(table.stdout.contains("file-client  (config file"))

            try Data(#"{"isuer": "typo"}"#.utf8).write(to: file)
            let typo = try await sandbox.run(["config"])
            #expect(typo.status == 78)
            #expect(typo.stderr.contains("unknown key 'isuer'"))
        }
    }

    @Test("the old VAULT_ names are read when the new ones are unset, with one note each; the new ones win")
    func legacyEnvironment() async throws {
        try await withSandbox { sandbox in
            let issuer = try #require(sandbox.server?.issuer.absoluteString)
            let old = try await sandbox.run(
                ["config"],
                environment: ["CREDENTIAL_VAULT_ISSUER": "", "VAULT_ISSUER": issuer, "VAULT_CLIENT_ID": "legacy-app"]
            )
            #expect(old.status == 0, "\(old.stderr)")
            #expect(old.stdout.contains("environment VAULT_ISSUER"), "\(old.stdout)")
            #expect(old.stdout.contains("legacy-app"))
            #expect(old.stderr.contains("reading VAULT_ISSUER as CREDENTIAL_VAULT_ISSUER"), "\(old.stderr)")
            #expect(old.stderr.components(separatedBy: "reading VAULT_ISSUER").count == 2, "one note per name")

            let both = try await sandbox.run(["config"], environment: ["VAULT_CLIENT_ID": "legacy-app"])
            #expect(both.stdout.contains("environment CREDENTIAL_VAULT_ISSUER"), "\(both.stdout)")
            #expect(!both.stderr.contains("reading VAULT_ISSUER"))
        }
    }

    @Test("the embedded default says so in one line, and keeps its issuer from run to run")
    func embeddedDefault() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let config = try await sandbox.run(["config"])
            #expect(config.stdout.contains("embedded default"))

            let register = try await sandbox.run(["register", "--password-stdin"], stdin: "correct horse\n")
            #expect(register.status == 0, "\(register.stderr)")
            let lines = register.stderr.split(separator: "\n").filter { $0.contains("embedded KeyServiceMock") }
            #expect(lines.count == 1, "\(register.stderr)")
            let line = String(try #require(lines.first))
            #expect(
                line.hasPrefix(
                    "credential-vault: no issuer configured: using the embedded KeyServiceMock at http://127.0.0.1:"
                )
            )
            let state = sandbox.root.appending(path: "state/credential-vault/keyservice-mock")
            #expect(FileManager.default.fileExists(atPath: state.appending(path: "state.sqlite").path))

            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "correct horse\n")
            #expect(token.status == 0, "\(token.stderr)")
            let jwt = try JWT(token: token.stdout.trimmingCharacters(in: .newlines))
            let issuer = try #require(jwt.issuer)
            #expect(line.contains(" at \(issuer) "), "the second run serves the same issuer: \(issuer) vs \(line)")
        }
    }

    @Test("credential-vault demo runs the whole story and exits 0")
    func demo() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let demo = try await sandbox.run(["demo"])
            #expect(demo.status == 0, "\(demo.stdout)\n\(demo.stderr)")
            for text in [
                "signed in as demo-user", "KEY LOCKED", "is refused", "logged in with the new password",
                "Demo finished",
            ] {
                #expect(demo.stdout.contains(text), "missing: \(text)")
            }
            #expect(demo.stderr.isEmpty, "\(demo.stderr)")
        }
    }

    @Test("--help documents every exit status; completion scripts are generated")
    func helpAndCompletions() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let help = try await sandbox.run(["--help"])
            #expect(help.status == 0)
            for code in ["64", "65", "66", "67", "68", "69", "70", "77", "78"] {
                #expect(help.stdout.contains("  \(code)  "), "exit status \(code) is documented")
            }
            for shell in ["bash", "zsh", "fish"] {
                let script = try await sandbox.run(["--generate-completion-script", shell])
                #expect(script.status == 0)
                #expect(script.stdout.contains("register"))
            }
            let usage = try await sandbox.run(["login", "--password", "secret"])
            #expect(usage.status == 64, "a password is never an argument")
        }
    }

    /// The commands other programs call often are parsed on their own (HotCommand); whatever does not parse that way
    /// goes the usual way, so a mistake or `--help` reads exactly as for any other command.
    @Test(
        "token, fhir get, git-credential, kubectl-credential, docker-credential: mistakes and --help as any command's",
        arguments: [
            (["token"], ["--bogus"]), (["fhir", "get"], []), (["git-credential"], ["--bogus"]),
            (["kubectl-credential"], ["--bogus"]), (["docker-credential"], ["--bogus"]),
        ]
    )
    func hotCommandMistakes(command: [String], mistake: [String]) async throws {
        let name = "credential-vault " + command.joined(separator: " ")
        try await withSandbox(withServer: false) { sandbox in
            let wrong = try await sandbox.run(command + mistake)
            #expect(wrong.status == 64, "\(command): \(wrong.stderr)")
            #expect(wrong.stdout.isEmpty)
            #expect(wrong.stderr.contains("Usage: \(name) "), "\(wrong.stderr)")
            let help = try await sandbox.run(command + ["--help"])
            #expect(help.status == 0, "\(help.stderr)")
            #expect(help.stdout.contains("USAGE: \(name) "), "\(help.stdout)")
        }
    }
}
