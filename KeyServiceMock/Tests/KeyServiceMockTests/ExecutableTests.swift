import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The built `keyservice-mock`, run as a separate process (``TestProcess``: posix_spawn, a process group of its own,
/// killed with the group when the last reference goes).
final class MockProcess: Sendable {
    let child: TestProcess
    let baseURL: URL
    let readyLine: String

    var keyServiceURL: URL { baseURL.appendingPathComponent("auth/realms/demo/keyservice/v1") }
    var pid: Int32 { child.pid }

    private init(child: TestProcess, baseURL: URL, readyLine: String) {
        self.child = child
        self.baseURL = baseURL
        self.readyLine = readyLine
    }

    /// The executable next to the test bundle (`swift build` puts every product in one folder).
    static var executable: URL {
        get throws {
            let candidates = [
                Bundle.main.bundleURL,
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                Bundle.main.bundleURL.deletingLastPathComponent(),
            ].map { $0.appendingPathComponent("keyservice-mock") }
            return try #require(
                candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                "build the keyservice-mock product first (swift build)"
            )
        }
    }

    /// Starts the executable with `arguments` and waits for its ready line; its standard error goes to
    /// `standardError` when given, else nowhere. It stops on its own when this test process is gone
    /// (`--exit-on-stdin-eof`, its standard input a pipe only this process holds).
    ///
    /// With `ignoringFileSizeSignal`, it starts with SIGXFSZ ignored (through `sh`, whose `trap ''` an
    /// `exec` keeps), so that a write past its file-size limit fails with EFBIG instead of killing it.
    static func launch(
        _ arguments: [String],
        standardError: FileHandle? = nil,
        ignoringFileSizeSignal: Bool = false
    ) async throws -> MockProcess {
        let server = [try executable.path] + arguments + ["--exit-on-stdin-eof"]
        let child = try TestProcess(
            ignoringFileSizeSignal ? ["/bin/sh", "-c", #"trap '' XFSZ; exec "$0" "$@""#] + server : server,
            input: .pipe,
            output: .pipe,
            error: standardError.map { .descriptor($0.fileDescriptor) } ?? .none
        )
        let handle = try #require(child.output)
        let line = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                try await onOwnThread {
                    var buffer = Data()
                    while !buffer.contains(UInt8(ascii: "\n")) {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        buffer.append(chunk)
                    }
                    return String(decoding: buffer, as: UTF8.self).split(separator: "\n").first.map(String.init)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let line, let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            throw LaunchError(description: "keyservice-mock printed no ready line")
        }
        return MockProcess(child: child, baseURL: try #require(URL(string: String(url))), readyLine: line)
    }

    /// Runs the executable with `arguments` to its end (for the runs that refuse to start).
    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try await TestProcess.run([try executable.path] + arguments)
        return (run.termination.status, run.outputText, run.errorText)
    }

    func signal(_ number: Int32) {
        child.signal(number)
    }

    /// Waits for the process to end; its exit status (128 + the signal when one ended it), `nil` when it is still
    /// running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32? {
        await child.wait(timeout: timeout)?.status
    }

    struct LaunchError: Error, CustomStringConvertible {
        let description: String
    }
}

@Suite("keyservice-mock, the executable, over real HTTP from another process")
struct ExecutableTests {
    let http = HTTPClient()

    @Test("prints one ready line with its URL and realm, and stops cleanly on SIGTERM and SIGINT")
    func readyLineAndSignals() async throws {
        for signal in [SIGTERM, SIGINT] {
            let mock = try await MockProcess.launch(["--port", "0", "--realm", "demo"])
            #expect(
                mock.readyLine.wholeMatch(of: /keyservice-mock listening on http:\/\/127\.0\.0\.1:\d+ realm demo/)
                    != nil
            )
            let calls = KeyServiceCalls(base: mock.keyServiceURL, http: http)
            #expect(try await calls.createKey(secret: "s").status == 200)
            mock.signal(signal)
            let status = try await mock.waitForExit()
            #expect(status == 0, "exit status after signal \(signal)")
            if status == nil { mock.signal(SIGKILL) }
        }
    }

    @Test("--smart-legacy and --smart-without-s256 turn the SMART mode on, and the ready line names the FHIR base")
    func smartFlags() async throws {
        let legacy = try await MockProcess.launch(["--port", "0", "--smart-legacy"])
        let fhirBase = legacy.baseURL.absoluteString + "/fhir/r4"
        #expect(
            legacy.readyLine
                == "keyservice-mock listening on \(legacy.baseURL.absoluteString) realm demo fhir \(fhirBase)"
        )
        #expect(try await http.get(URL(string: fhirBase + "/.well-known/smart-configuration")!).status == 404)
        #expect(try await http.get(URL(string: fhirBase + "/metadata")!).json.string("fhirVersion") == "4.0.1")
        let launch = try await http.post(
            legacy.baseURL.appendingPathComponent("smart/ehr-launch"),
            json: ["patient": "p3"]
        )
        #expect(launch.status == 200)
        #expect(launch.string("iss") == fhirBase)
        #expect(launch.string("launch") != nil)
        legacy.signal(SIGTERM)
        #expect(try await legacy.waitForExit() == 0)

        let withoutS256 = try await MockProcess.launch(["--port", "0", "--smart-without-s256"])
        let configuration = try await http.get(
            URL(string: withoutS256.baseURL.absoluteString + "/fhir/r4/.well-known/smart-configuration")!
        )
        #expect(configuration.json.strings("code_challenge_methods_supported") == ["plain"])
        withoutS256.signal(SIGTERM)
        #expect(try await withoutS256.waitForExit() == 0)
    }

    @Test(
        "--smart-backend-client ID=JWKS_FILE implies --smart and takes that client's assertions; a missing file is refused"
    )
    func smartBackendClient() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = try BackendKeys.shared.get()
        let file = directory.appendingPathComponent("jwks.json")
        try Data(try keys.jwks().utf8).write(to: file)
        let mock = try await MockProcess.launch(["--port", "0", "--smart-backend-client", "bulk-export=\(file.path)"])
        #expect(mock.readyLine.hasSuffix(" fhir \(mock.baseURL.absoluteString)/fhir/r4"))
        let document = try await http.get(
            URL(string: mock.baseURL.absoluteString + "/fhir/r4/.well-known/smart-configuration")!
        ).json
        #expect(document.strings("grant_types_supported")?.contains("client_credentials") == true)
        let tokenEndpoint = try #require(document.string("token_endpoint"))
        let now = Int(Date().timeIntervalSince1970)
        let assertion = try await keys.sign(
            AssertionClaims(aud: tokenEndpoint, exp: now + 240, iat: now),
            kid: "ec-1",
            signer: .ec
        )
        let answer = try await http.post(
            try #require(URL(string: tokenEndpoint)),
            form: [
                "grant_type": "client_credentials", "scope": "system/*.rs", "client_assertion": assertion,
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ]
        )
        #expect(answer.status == 200)
        #expect(answer.string("scope") == "system/*.rs")
        mock.signal(SIGTERM)
        #expect(try await mock.waitForExit() == 0)

        let missing = try await MockProcess.run(["--smart-backend-client", "b=\(directory.path)/none.json"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("cannot read the JWK Set file"), "\(missing.stderr)")
        try Data(#"{"keys":[]}"#.utf8).write(to: file)
        let empty = try await MockProcess.run(["--smart-backend-client", "b=\(file.path)"])
        #expect(empty.status != 0)
        #expect(empty.stderr.contains("the JWK Set of the SMART backend client b has no keys"), "\(empty.stderr)")
    }

    @Test("--dynamic-registration opens the registration endpoint, with or without --smart, and discovery names it")
    func dynamicRegistrationFlag() async throws {
        for arguments in [["--dynamic-registration"], ["--dynamic-registration", "--smart"]] {
            let mock = try await MockProcess.launch(["--port", "0"] + arguments)
            let issuer = mock.baseURL.absoluteString + "/auth/realms/demo"
            let discovery = try await http.get(URL(string: issuer + "/.well-known/openid-configuration")!).json
            let endpoint = try #require(discovery.string("registration_endpoint"), "\(arguments)")
            #expect(endpoint == issuer + "/clients-registrations/openid-connect")
            let registered = try await http.post(
                try #require(URL(string: endpoint)),
                body: Data(#"{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}"#.utf8)
            )
            #expect(registered.status == 201, "\(arguments)")
            #expect(registered.string("client_id") != nil)
            mock.signal(SIGTERM)
            #expect(try await mock.waitForExit() == 0)
        }
        let without = try await MockProcess.launch(["--port", "0", "--smart"])
        let endpoint = without.baseURL.absoluteString + "/auth/realms/demo/clients-registrations/openid-connect"
        #expect(try await http.post(URL(string: endpoint)!, body: Data("{}".utf8)).status == 404)
        without.signal(SIGTERM)
        #expect(try await without.waitForExit() == 0)
    }

    @Test("200 simultaneous wrong attempts give three 401s and 197 locks, and the lock survives kill -9 and a restart")
    func lockSurvivesKill() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["--port", "0", "--state-dir", directory.path]

        let first = try await MockProcess.launch(arguments)
        let counts = try await concurrentWrongAttempts(on: first.keyServiceURL, attempts: 200)
        #expect(counts == [401: 3, 204: 197])
        var calls = KeyServiceCalls(base: first.keyServiceURL, http: http)
        let lockedAnswer = try await http.post(
            first.keyServiceURL.appendingPathComponent("createkey"),
            json: ["secret": "right"]
        )
        let locked = (try #require(lockedAnswer.string("keyid")), try #require(lockedAnswer.string("longsecret")))
        for _ in 0..<3 { #expect(try await calls.key(locked.0, secret: "wrong").status == 401) }
        let counted = try await calls.newKey(secret: "right")
        for _ in 0..<2 { #expect(try await calls.key(counted.keyId, secret: "wrong").status == 401) }
        first.signal(SIGKILL)
        #expect(try await first.waitForExit() == 128 + SIGKILL)

        let second = try await MockProcess.launch(arguments)
        calls = KeyServiceCalls(base: second.keyServiceURL, http: http)
        #expect(try await calls.key(locked.0, secret: "right").status == 204)
        #expect(try await calls.key(locked.0, longSecret: locked.1).status == 204)
        // Two wrong attempts before the kill: one more locks.
        #expect(try await calls.key(counted.keyId, secret: "wrong").status == 401)
        #expect(try await calls.key(counted.keyId, secret: "right").status == 204)
        second.signal(SIGTERM)
        #expect(try await second.waitForExit() == 0)
    }

    @Test("--help lists the options the issue names")
    func help() async throws {
        let run = try await TestProcess.run([try MockProcess.executable.path, "--help"])
        let text = run.outputText
        #expect(run.termination == .exited(0))
        for option in [
            "--port", "--state-dir", "--realm", "--users-file", "--allow-non-loopback", "--max-keys-per-client",
            "--max-keys", "--access-token-lifetime", "--id-token-lifetime", "--refresh-token-lifetime", "--log-level",
            "--dynamic-registration",
        ] {
            #expect(text.contains(option), "\(option)")
        }
        #expect(!text.contains("--user "), "passwords no longer go on the command line")
    }

    @Test("--log-level debug logs each request and decision to standard error, and no secret")
    func debugLog() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let logFile = directory.appendingPathComponent("stderr.log")
        try #require(FileManager.default.createFile(atPath: logFile.path, contents: nil))
        let handle = try FileHandle(forWritingTo: logFile)
        let mock = try await MockProcess.launch(["--log-level", "debug"], standardError: handle)
        let secret = "secret-\(UUID().uuidString)"
        let calls = KeyServiceCalls(base: mock.keyServiceURL, http: http)
        let created = try await calls.newKey(secret: secret)
        #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
        mock.signal(SIGTERM)
        #expect(try await mock.waitForExit() == 0)
        try handle.close()
        let log = try String(contentsOf: logFile, encoding: .utf8)
        #expect(log.contains("request"))
        #expect(log.contains("key created"))
        #expect(log.contains("wrong secret, 1 of 3"))
        for value in [secret, created.key, created.longSecret] {
            #expect(!log.contains(value))
        }
        #expect(!log.contains(" error "), "a clean stop logs no error")
    }

    @Test("--users-file and lifetimes configure the identity provider; the file's first user is the one signed in")
    func usersFileAndLifetimes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = try usersFile(in: directory, "# test users\nann:pw:sub-ann\r\n\nbob:pw-bob\n", mode: 0o600)
        let mock = try await MockProcess.launch(["--users-file", users.path, "--access-token-lifetime", "42"])
        defer { mock.signal(SIGKILL) }
        let token = mock.baseURL.appendingPathComponent("auth/realms/demo/protocol/openid-connect/token")
        func login(_ username: String, _ password: String) async throws -> HTTPAnswer {
            try await http.post(
                token,
                form: ["grant_type": "password", "username": username, "password": password, "client_id": "vault"]
            )
        }
        let ann = try await login("ann", "pw")
        #expect(ann.status == 200)
        #expect(ann.json.int("expires_in") == 42)
        #expect(try claims(of: try #require(ann.string("access_token"))).string("sub") == "sub-ann")
        let bob = try await login("bob", "pw-bob")
        #expect(try claims(of: try #require(bob.string("access_token"))).string("sub") == "bob")
        // The default user is gone once a file names the users.
        #expect(try await login("demo", "demo-password").status == 400)

        var authorize = URLComponents(
            url: mock.baseURL.appendingPathComponent("auth/realms/demo/protocol/openid-connect/auth"),
            resolvingAgainstBaseURL: false
        )!
        authorize.percentEncodedQuery = formEncoded([
            "response_type": "code", "client_id": "vault", "redirect_uri": "http://127.0.0.1:5000/callback",
            "code_challenge": OIDCClient.pkce().challenge, "code_challenge_method": "S256",
        ])
        let redirect = try await http.get(authorize.url!)
        #expect(redirect.status == 302)
        #expect(redirect.header("Location")?.contains("code=") == true)
    }

    @Test("without --users-file the default user demo signs in")
    func defaultUser() async throws {
        let mock = try await MockProcess.launch([])
        defer { mock.signal(SIGKILL) }
        let answer = try await http.post(
            mock.baseURL.appendingPathComponent("auth/realms/demo/protocol/openid-connect/token"),
            form: ["grant_type": "password", "username": "demo", "password": "demo-password", "client_id": "vault"]
        )
        #expect(answer.status == 200)
        #expect(try claims(of: try #require(answer.string("access_token"))).string("sub") == "demo-user")
    }

    @Test("a users file others can read or write is refused, with the chmod that fixes it and no password")
    func usersFileOpenToOthers() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602] {
            let users = try usersFile(in: directory, "ann:secret-password-\(mode)\n", mode: mode)
            let run = try await MockProcess.run(["--users-file", users.path])
            #expect(run.status == 1, "mode \(String(mode, radix: 8))")
            #expect(run.stdout.isEmpty, "no ready line")
            #expect(run.stderr.contains("chmod 600 \(users.path)"), "\(run.stderr)")
            #expect(!run.stderr.contains("secret-password"))
        }
    }

    @Test("a users file that is missing, malformed or empty is refused, naming the line but not its content")
    func usersFileMalformed() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = try await MockProcess.run(["--users-file", directory.appendingPathComponent("none").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot read the users file"))

        for (content, message) in [
            ("ann:pw\njust-a-name-and-secret-password\n", "line 2: expected NAME:PASSWORD[:SUBJECT]"),
            ("ann::sub\n", "line 1: expected NAME:PASSWORD[:SUBJECT]"),
            ("ann:secret-password\nann:other\n", "line 2: the user ann is listed twice"),
            ("# nobody\n\n", "lists no user"),
        ] {
            let users = try usersFile(in: directory, content, mode: 0o600)
            let run = try await MockProcess.run(["--users-file", users.path])
            #expect(run.status == 1)
            #expect(run.stderr.contains(message), "\(run.stderr)")
            #expect(!run.stderr.contains("secret-password"))
        }
    }

    @Test("--user is refused with a pointer to --users-file: argv is visible to every local user")
    func userOptionRefused() async throws {
        let run = try await MockProcess.run(["--user", "ann:secret-password"])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--users-file"))
        #expect(!run.stderr.contains("secret-password"))
    }

    /// Writes `content` to a new users file in `directory` and gives it `mode`.
    private func usersFile(in directory: URL, _ content: String, mode: Int) throws -> URL {
        let url = directory.appendingPathComponent("users-\(UUID().uuidString)")
        try Data(content.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        return url
    }
}
