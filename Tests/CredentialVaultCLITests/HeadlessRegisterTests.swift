import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `register --device` and `register --no-browser` over the built binary, the test playing the user at a browser on
/// another device: it reads what the binary shows on standard error while it runs, and acts on it.
@Suite("credential-vault register: --device and --no-browser", .tags(.cli))
struct HeadlessRegisterTests {
    static let password = "correct horse"

    /// Runs `credential-vault arguments...` with a pipe as standard input and standard output and error in files;
    /// `interact` gets the child and a reader of its standard error so far.
    private static func run(
        _ sandbox: CLISandbox,
        _ arguments: [String],
        interact: (TestProcess, @escaping () -> String) async throws -> Void
    ) async throws -> CLIResult {
        let id = UUID().uuidString
        let outURL = sandbox.root.appending(path: "out-\(id)")
        let errURL = sandbox.root.appending(path: "err-\(id)")
        let status = try await TestProcess.with(
            [CLISandbox.vaultBinary.path] + arguments,
            environment: sandbox.environment,
            directory: sandbox.root,
            input: .pipe,
            output: .file(outURL),
            error: .file(errURL)
        ) { child in
            try await interact(child) { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }
            return await child.wait().status
        }
        return CLIResult(
            status: status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        )
    }

    /// The first URL in `text` that contains `marker`, once the binary has written it (nil if it never does).
    private static func awaitURL(containing marker: String, in read: () -> String) async throws -> URL? {
        for _ in 0..<600 {
            let words = read().split(whereSeparator: { $0.isWhitespace })
            if let word = words.first(where: { $0.contains(marker) && $0.hasPrefix("http") }) {
                return URL(string: String(word))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test("--device shows the verification URI, user code and complete URI on standard error; stdout stays clean")
    func device() async throws {
        var mock = KeyServiceMockConfiguration()
        // Whole seconds are the RFC's unit: the smallest interval keeps the test short.
        mock.deviceFlow = DeviceFlowMode(interval: 1)
        try await withSandbox(server: mock) { sandbox in
            let result = try await Self.run(sandbox, ["register", "--device", "--password-stdin"]) { child, stderr in
                try child.write("\(Self.password)\n")
                child.closeInput()
                let complete = try #require(try await Self.awaitURL(containing: "user_code=", in: stderr))
                // The user approves on another device.
                let approval = try await sandbox.transport().send(
                    HTTPRequest(method: "GET", url: complete, timeout: 60)
                )
                #expect(approval.status == 200)
            }
            #expect(result.status == 0, "\(result.stderr)")
            let code = try #require(
                result.stderr.split(whereSeparator: { $0.isWhitespace }).first {
                    $0.count == 9 && $0.dropFirst(4).first == "-"
                }.map(String.init)
            )
            #expect(result.stderr.contains("/device\n"))
            #expect(result.stderr.contains("user_code=\(code)"))
            #expect(!result.stdout.contains(code))
            #expect(!result.stdout.contains("/device"))
            #expect(result.stdout.contains("Registered demo-user"))
            // The same password step as register: the password opens the login.
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(token.status == 0, "\(token.stderr)")
        }
    }

    @Test("--device at an issuer without a device endpoint says so, and stores nothing")
    func deviceNotOffered() async throws {
        try await withSandbox { sandbox in
            let result = try await sandbox.run(
                ["register", "--device", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(result.status != 0)
            #expect(result.stderr.contains("device_authorization_endpoint"), "\(result.stderr)")
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") })
        }
    }

    /// Runs `register --no-browser`, pasting the address the browser ended at, changed by `tamper`.
    private static func pasteRun(
        _ sandbox: CLISandbox,
        tamper: @escaping @Sendable (URL) -> URL
    ) async throws
        -> CLIResult
    {
        try await run(sandbox, ["register", "--no-browser", "--password-stdin"]) { child, stderr in
            let authorization = try #require(try await Self.awaitURL(containing: "response_type=code", in: stderr))
            let answer = try await sandbox.transport().send(HTTPRequest(method: "GET", url: authorization, timeout: 60))
            let location = try #require(answer.headers["location"].flatMap { URL(string: $0) })
            try child.write("\(tamper(location).absoluteString)\n\(Self.password)\n")
            child.closeInput()
        }
    }

    @Test("--no-browser prints the authorization URL and takes the pasted redirect; stdout stays clean")
    func pasted() async throws {
        try await withSandbox { sandbox in
            let result = try await Self.pasteRun(sandbox) { $0 }
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("response_type=code"))
            #expect(!result.stdout.contains("response_type=code"))
            #expect(result.stdout.contains("Registered demo-user"))
        }
    }

    @Test("--no-browser refuses a tampered state and a wrong iss with a clear error, and stores nothing")
    func pastedRefused() async throws {
        try await withSandbox { sandbox in
            let cases: [(@Sendable (URL) -> URL, String)] = [
                ({ Self.replacing("state", with: "forged", in: $0) }, "state does not match"),
                ({ Self.replacing("iss", with: "https://evil.example", in: $0) }, "RFC 9207"),
            ]
            for (tamper, words) in cases {
                let result = try await Self.pasteRun(sandbox, tamper: tamper)
                #expect(result.status != 0)
                #expect(result.stderr.contains(words), "\(result.stderr)")
                #expect(!result.stdout.contains("Registered"))
                #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") }, "\(sandbox.storeFiles())")
            }
        }
    }

    private static func replacing(_ name: String, with value: String, in url: URL) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = components.queryItems?.map {
            $0.name == name ? URLQueryItem(name: name, value: value) : $0
        }
        return components.url!
    }
}
