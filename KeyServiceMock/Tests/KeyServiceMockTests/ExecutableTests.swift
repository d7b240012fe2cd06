import Foundation
import KeyServiceMock
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `keyservice-mock`, run as a separate process.
final class MockProcess: Sendable {
    let process: Process
    let baseURL: URL
    let readyLine: String

    var keyServiceURL: URL { baseURL.appendingPathComponent("auth/realms/demo/keyservice/v1") }

    private init(process: Process, baseURL: URL, readyLine: String) {
        self.process = process
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
    /// `standardError` when given, else to this process's.
    static func launch(_ arguments: [String], standardError: FileHandle? = nil) async throws -> MockProcess {
        let process = Process()
        process.executableURL = try executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        if let standardError { process.standardError = standardError }
        try process.run()
        let handle = output.fileHandleForReading
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
            process.terminate()
            throw LaunchError(description: "keyservice-mock printed no ready line")
        }
        return MockProcess(process: process, baseURL: try #require(URL(string: String(url))), readyLine: line)
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to end; `nil` when it is still running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
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
        #expect(try await first.waitForExit() == SIGKILL)

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
        let process = Process()
        process.executableURL = try MockProcess.executable
        process.arguments = ["--help"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = try await onOwnThread {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        #expect(process.terminationStatus == 0)
        for option in [
            "--port", "--state-dir", "--realm", "--user", "--access-token-lifetime", "--id-token-lifetime",
            "--refresh-token-lifetime", "--log-level",
        ] {
            #expect(text.contains(option), "\(option)")
        }
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

    @Test("--user and lifetimes configure the identity provider")
    func userAndLifetimes() async throws {
        let mock = try await MockProcess.launch(["--user", "ann:pw:sub-ann", "--access-token-lifetime", "42"])
        defer { mock.signal(SIGKILL) }
        let answer = try await http.post(
            mock.baseURL.appendingPathComponent("auth/realms/demo/protocol/openid-connect/token"),
            form: ["grant_type": "password", "username": "ann", "password": "pw", "client_id": "vault"]
        )
        #expect(answer.status == 200)
        #expect(answer.json.int("expires_in") == 42)
        #expect(try claims(of: try #require(answer.string("access_token"))).string("sub") == "sub-ann")
    }
}
