import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Named profiles of the config file (issue 24, "several accounts"): `--profile` / `CREDENTIAL_VAULT_PROFILE`, a
/// profile's keys over the top level's, one agent serving two profiles at two issuers, and git and docker choosing
/// the profile by host.
@Suite("profiles: named profiles in the config file, one agent for two issuers, helpers choosing by host", .tags(.cli))
struct ProfileTests {
    /// The sandbox's issuer and store variables emptied (an empty variable counts as unset), so the config file
    /// decides.
    static let fileDecides = ["CREDENTIAL_VAULT_ISSUER": "", "CREDENTIAL_VAULT_STORE": ""]

    /// Writes `json` as the sandbox's config file (mode 0600).
    static func writeConfig(_ json: String, in sandbox: CLISandbox) throws -> URL {
        let folder = sandbox.root.appending(path: "config/credential-vault")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "config.json")
        try Data(json.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file
    }

    /// `credential-vault config --json` as a dictionary of {value, source} by name.
    static func config(
        _ sandbox: CLISandbox,
        _ arguments: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> [String: [String: Any]] {
        let result = try await sandbox.run(
            ["config", "--json"] + arguments,
            environment: fileDecides.merging(environment) { $1 }
        )
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?.compactMapValues { $0 as? [String: Any] })
    }

    static let threeProfiles = """
        {"issuer": "https://top.example/realms/x", "clientId": "top-client", "scopes": ["openid", "offline_access"],
         "clientSecretFile": "/tmp/top-client-secret",
         "profiles": {
           "work": {"issuer": "https://work.example/realms/w", "scopes": "openid work"},
           "home": {"issuer": "https://home.example/realms/h", "store": "/tmp/home-store"},
           "ci.bot_1": {"clientId": "bot"}}}
        """

    @Test("a profile's keys override the top level's; flag over environment; the store of a named profile")
    func overrides() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeConfig(Self.threeProfiles, in: sandbox)
            let data = sandbox.root.appending(path: "data/credential-vault").path

            let top = try await Self.config(sandbox)
            #expect(top["profile"]?["value"] is NSNull)
            #expect(top["issuer"]?["value"] as? String == "https://top.example/realms/x")
            #expect(top["issuer"]?["source"] as? String == "config file \(file.path)")
            #expect(top["store"]?["value"] as? String == data, "the default profile's store is where it always was")

            let work = try await Self.config(sandbox, ["--profile", "work"])
            #expect(work["profile"]?["value"] as? String == "work")
            #expect(work["profile"]?["source"] as? String == "flag --profile")
            #expect(work["issuer"]?["value"] as? String == "https://work.example/realms/w")
            #expect(work["issuer"]?["source"] as? String == "config file \(file.path), profile work")
            #expect(work["scopes"]?["value"] as? String == "openid work")
            // A profile with an issuer of its own takes none of the top level's issuer-bound keys (its client id,
            // secret or key would go to another issuer); the others, as the scopes of ci.bot_1 below, it inherits.
            #expect(work["client-id"]?["value"] as? String == "vault", "not the top level's client at another issuer")
            #expect(work["client-id"]?["source"] as? String == "default")
            #expect(work["client-secret-file"]?["value"] is NSNull)
            #expect(work["store"]?["value"] as? String == data + "/profiles/work")
            #expect(work["store"]?["source"] as? String == "derived from the profile work")
            // A store every profile would inherit (the top level's, or the environment's) holds each named profile's
            // logins in a directory of their own.
            let shared = try await Self.config(
                sandbox,
                ["--profile", "work"],
                environment: ["CREDENTIAL_VAULT_STORE": "/tmp/shared-store"]
            )
            #expect(shared["store"]?["value"] as? String == "/tmp/shared-store/profiles/work")

            let home = try await Self.config(sandbox, [], environment: ["CREDENTIAL_VAULT_PROFILE": "home"])
            #expect(home["profile"]?["source"] as? String == "environment CREDENTIAL_VAULT_PROFILE")
            #expect(home["store"]?["value"] as? String == "/tmp/home-store")

            let flagWins = try await Self.config(
                sandbox,
                ["--profile", "ci.bot_1"],
                environment: ["CREDENTIAL_VAULT_PROFILE": "home"]
            )
            #expect(flagWins["profile"]?["value"] as? String == "ci.bot_1")
            #expect(flagWins["client-id"]?["value"] as? String == "bot")
            #expect(flagWins["issuer"]?["value"] as? String == "https://top.example/realms/x")
            // No issuer of its own: the top level's other keys are its.
            #expect(flagWins["scopes"]?["value"] as? String == "openid offline_access")
            #expect(flagWins["client-secret-file"]?["value"] as? String == "/tmp/top-client-secret")

            let environmentWins = try await Self.config(
                sandbox,
                ["--profile", "work"],
                environment: ["CREDENTIAL_VAULT_ISSUER": "https://env.example/realms/e"]
            )
            #expect(environmentWins["issuer"]?["value"] as? String == "https://env.example/realms/e")
            #expect(environmentWins["issuer"]?["source"] as? String == "environment CREDENTIAL_VAULT_ISSUER")
        }
    }

    @Test("a missing profile lists the known ones; an unknown key in a profile is refused as at the top level")
    func refusals() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeConfig(Self.threeProfiles, in: sandbox)
            for arguments in [["config", "--profile", "nope"], ["token", "--profile", "nope"]] {
                let missing = try await sandbox.run(arguments, environment: Self.fileDecides)
                #expect(missing.status == 78, "\(arguments): \(missing.stderr)")
                #expect(missing.stderr.contains("no profile 'nope'"), "\(missing.stderr)")
                #expect(missing.stderr.contains("its profiles: ci.bot_1, home, work"), "\(missing.stderr)")
            }
            let twice = try await sandbox.run(["config", "--profile", "work", "--profile", "home"])
            #expect(twice.status == 64, "\(twice.stderr)")
            let badName = try await sandbox.run(["config"], environment: ["CREDENTIAL_VAULT_PROFILE": "a/b"])
            #expect(badName.status == 64, "\(badName.stderr)")

            // Hosts that could never match, or that two profiles claim, are refused when the file is read.
            for (json, saying) in [
                (#"{"profiles": {"work": {"hosts": ["https://git.work.example"]}}}"#, "a host is a name or name:port"),
                (
                    #"{"hosts": ["git.example"], "profiles": {"work": {"hosts": ["GIT.example"]}}}"#,
                    "both name the host"
                ),
            ] {
                _ = try Self.writeConfig(json, in: sandbox)
                let refused = try await sandbox.run(["config"])
                #expect(refused.status == 78, "\(json): \(refused.stderr)")
                #expect(refused.stderr.contains(saying), "\(refused.stderr)")
            }

            _ = try Self.writeConfig(#"{"profiles": {"work": {"isuer": "https://x.example"}}}"#, in: sandbox)
            let typo = try await sandbox.run(["config"])
            #expect(typo.status == 78, "\(typo.stderr)")
            #expect(
                typo.stderr.contains("the config file \(file.path), profile 'work', has an unknown key 'isuer'"),
                "\(typo.stderr)"
            )
            #expect(typo.stderr.contains("known keys: fhir, issuer"), "\(typo.stderr)")

            _ = try Self.writeConfig(#"{"profiles": {"work": {"clientSecret": "s"}}}"#, in: sandbox)
            let secret = try await sandbox.run(["config"])
            #expect(secret.status == 78)
            #expect(secret.stderr.contains("profile 'work', has 'clientSecret'"), "\(secret.stderr)")

            _ = try Self.writeConfig(#"{"profiles": {"a b": {}}}"#, in: sandbox)
            let spaced = try await sandbox.run(["config"])
            #expect(spaced.status == 78, "\(spaced.stderr)")
            #expect(spaced.stderr.contains("a profile named 'a b'"), "\(spaced.stderr)")
        }
    }

    @Test("setup-git --profile writes the helper line with that profile")
    func setupGitProfile() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let result = try await sandbox.run(
                ["setup-git", "--host", "git.work.example", "--profile", "work", "--dry-run"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("git-credential --profile work'"), "\(result.stdout)")
        }
    }

    static let passwords = ["one": "correct horse one", "two": "correct horse two"]

    @Test("two profiles at two issuers, one agent: each token from its issuer, no password after the start")
    func twoIssuersOneAgent() async throws {
        let logOne = RequestLog()
        let logTwo = RequestLog()
        try await withSandbox(server: logOne.configuration()) { sandbox in
            try await withSandbox(server: logTwo.configuration()) { second in
                let issuerOne = try #require(sandbox.server?.issuer.absoluteString)
                let issuerTwo = try #require(second.server?.issuer.absoluteString)
                _ = try Self.writeConfig(
                    """
                    {"profiles": {
                      "one": {"issuer": "\(issuerOne)", "hosts": ["git.one.example"]},
                      "two": {"issuer": "\(issuerTwo)", "hosts": ["git.two.example", "registry.two.example:5000"]}}}
                    """,
                    in: sandbox
                )
                for name in ["one", "two"] {
                    let register = try await sandbox.run(
                        ["register", "--unattended", "--password-stdin", "--profile", name],
                        stdin: "\(Self.passwords[name]!)\n",
                        environment: Self.fileDecides
                    )
                    try #require(register.status == 0, "\(name): \(register.stderr)")
                }
                // Both logins are demo-user's, side by side: each profile has a store of its own.
                let data = sandbox.root.appending(path: "data/credential-vault/profiles")
                #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).sorted() == ["one", "two"])

                let started = try await sandbox.run(
                    ["agent", "--password-stdin", "--profile", "one", "--profile", "two"],
                    stdin: "\(Self.passwords["one"]!)\n\(Self.passwords["two"]!)\n",
                    environment: Self.fileDecides
                )
                let lines = started.stdout.split(separator: "\n").map(String.init)
                try #require(started.status == 0 && lines.count == 2, "\(started.stdout) \(started.stderr)")
                let agents = try lines.map {
                    try AgentTests.runningAgent(from: CLIResult(status: 0, stdout: $0, stderr: ""))
                }
                #expect(agents[0].pid == agents[1].pid, "one process serves both profiles")
                #expect(agents[0].socket != agents[1].socket, "each profile on its own socket")
                #expect(lines[0].contains("(profile one)") && lines[1].contains("(profile two)"))
                do {
                    try await Self.expectServed(
                        sandbox,
                        issuers: ["one": issuerOne, "two": issuerTwo],
                        logs: [logOne, logTwo]
                    )
                } catch {
                    kill(agents[0].pid, SIGKILL)
                    throw error
                }
                try await AgentTests.waitUntilGone(agents[0].pid)
                if AgentTests.isRunning(agents[0].pid) { kill(agents[0].pid, SIGKILL) }

                // --all-profiles: every named profile, by name, one password line each; --json prints an array.
                let all = try await sandbox.run(
                    ["agent", "--password-stdin", "--all-profiles", "--json"],
                    stdin: "\(Self.passwords["one"]!)\n\(Self.passwords["two"]!)\n",
                    environment: Self.fileDecides
                )
                let reports = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]]
                let pids = Set((reports ?? []).compactMap { ($0["pid"] as? NSNumber)?.int32Value })
                for pid in pids { kill(pid, SIGTERM) }
                #expect(all.status == 0, "\(all.stderr)")
                #expect(reports?.map { $0["profile"] as? String } == ["one", "two"], "\(all.stdout)")
                #expect(pids.count == 1, "one process")
            }
        }
    }

    /// With the agent running for profiles one and two: tokens, helpers, then `lock` one profile at a time.
    static func expectServed(
        _ sandbox: CLISandbox,
        issuers: [String: String],
        logs: [RequestLog]
    ) async throws {
        let before = logs.map(\.tokenRequests)
        var tokens: [String: String] = [:]
        for name in ["one", "two"] {
            // Standard input is empty: a password prompt would fail (exit 64), so status 0 means none was asked.
            let token = try await sandbox.run(["token", "--profile", name], environment: fileDecides)
            #expect(token.status == 0, "\(name): \(token.stderr)")
            #expect(token.stderr.isEmpty, "\(token.stderr)")
            let text = token.stdout.trimmingCharacters(in: .newlines)
            #expect(try JWT(token: text).issuer == issuers[name], "profile \(name)'s token is its issuer's")
            tokens[name] = text
        }
        #expect(logs.map(\.tokenRequests) == before, "the agent served both without a token request")

        for (host, name) in [("git.one.example", "one"), ("git.two.example", "two")] {
            let get = try await sandbox.run(
                ["git-credential", "get"],
                stdin: "protocol=https\nhost=\(host)\n\n",
                environment: fileDecides
            )
            #expect(get.status == 0, "\(host): \(get.stderr)")
            let answered = get.stdout.split(separator: "\n").contains("password=\(tokens[name]!)")
            #expect(answered, "git gets profile \(name)'s token for \(host)")
        }
        let unclaimed = try await sandbox.run(
            ["git-credential", "get"],
            stdin: "protocol=https\nhost=git.other.example\n\n",
            environment: fileDecides
        )
        #expect(unclaimed.status == 0, "\(unclaimed.stderr)")
        #expect(unclaimed.stdout.isEmpty, "a host no profile names gets nothing: git asks its next helper")
        let forced = try await sandbox.run(
            ["git-credential", "get", "--profile", "one"],
            stdin: "protocol=https\nhost=git.other.example\n\n",
            environment: fileDecides
        )
        #expect(forced.stdout.split(separator: "\n").contains("password=\(tokens["one"]!)"), "--profile decides")
        // CREDENTIAL_VAULT_PROFILE, exported for `token`, never widens what a host gets: the hosts decide.
        let exported = fileDecides.merging(["CREDENTIAL_VAULT_PROFILE": "one"]) { $1 }
        let exportedOther = try await sandbox.run(
            ["git-credential", "get"],
            stdin: "protocol=https\nhost=git.other.example\n\n",
            environment: exported
        )
        #expect(exportedOther.status == 0 && exportedOther.stdout.isEmpty, "\(exportedOther.stderr)")
        let exportedTwo = try await sandbox.run(
            ["git-credential", "get"],
            stdin: "protocol=https\nhost=git.two.example\n\n",
            environment: exported
        )
        #expect(exportedTwo.stdout.split(separator: "\n").contains("password=\(tokens["two"]!)"))
        // An agent serves only the issuer it logged in to: profile one's store and user at issuer two finds none
        // (here: a password prompt, refused without a terminal), and nothing is written to standard output.
        let otherIssuer = try await sandbox.run(
            ["token", "--profile", "one", "--issuer", issuers["two"]!],
            environment: fileDecides
        )
        #expect(otherIssuer.status != 0 && otherIssuer.stdout.isEmpty, "\(otherIssuer.stderr)")

        let docker = try await sandbox.run(
            ["docker-credential", "get"],
            stdin: "https://registry.two.example:5000/v2/\n",
            environment: fileDecides
        )
        #expect(docker.status == 0, "\(docker.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(docker.stdout.utf8)) as? [String: Any]
        #expect(object?["Secret"] as? String == tokens["two"], "docker gets profile two's token for its registry")
        let dockerOther = try await sandbox.run(
            ["docker-credential", "get"],
            stdin: "registry.one.example\n",
            environment: fileDecides
        )
        #expect(dockerOther.status == 1)
        #expect(dockerOther.stdout == "credentials not found in native keychain\n")

        let lock = try await sandbox.run(["lock", "--profile", "one"], environment: fileDecides)
        #expect(lock.status == 0 && lock.stdout.contains("Locked"), "\(lock.stderr)")
        let oneGone = try await sandbox.run(["token", "--profile", "one"], environment: fileDecides)
        #expect(oneGone.status == 64, "profile one needs a password again: \(oneGone.stderr)")
        let twoStill = try await sandbox.run(["token", "--profile", "two"], environment: fileDecides)
        #expect(twoStill.status == 0, "profile two is still served: \(twoStill.stderr)")
        let lockTwo = try await sandbox.run(["lock", "--profile", "two"], environment: fileDecides)
        #expect(lockTwo.status == 0 && lockTwo.stdout.contains("Locked"), "\(lockTwo.stderr)")
    }
}
