import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Key service: an attempt that cannot be counted is not checked")
struct FailClosedTests {
    let http = HTTPClient()

    static let unavailableBody =
        #"{"error":"temporarily_unavailable","error_description":"the attempt cannot be counted, so it is not checked; try again later"}"#

    @Test(
        "a key service that cannot write refuses every guess with 503, the right secret included, and counts none",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/sh"))
    )
    func cannotWrite() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = Pipe()
        let mock = try await MockProcess.launch(
            ["--state-dir", directory.path, "--log-level", "error"],
            standardError: log.fileHandleForWriting,
            ignoringFileSizeSignal: true
        )
        try log.fileHandleForWriting.close()
        let calls = KeyServiceCalls(base: mock.keyServiceURL, http: http)
        let created = try await calls.newKey(secret: "right")
        #expect(try await calls.key(created.keyId, secret: "right").status == 200)

        // The kernel now refuses every write of the server to any file past its first byte (EFBIG): its
        // database cannot change, as on a full disk. prlimit(2) works on root too, unlike file permissions.
        try await setFileSizeLimit(of: mock.pid, to: 1)
        var refused = 0
        for answer in [
            try await calls.key(created.keyId, secret: "right"),
            try await calls.key(created.keyId, secret: "wrong-1"),
            try await calls.key(created.keyId, secret: "wrong-2"),
            try await calls.key(created.keyId, secret: "wrong-3"),
            try await calls.key(created.keyId, secret: "wrong-4"),
            try await calls.key(created.keyId, longSecret: created.longSecret),
            try await calls.key(created.keyId, longSecret: "wrong-long-secret"),
            try await calls.key(created.keyId, secret: "right"),
        ] {
            #expect(answer.status == 503)
            #expect(String(decoding: answer.body, as: UTF8.self) == Self.unavailableBody)
            #expect(answer.header("Content-Type") == "application/json")
            refused += 1
        }
        #expect(try await calls.createKey(secret: "another").status == 500, "a key that cannot be stored")

        // Writable again: none of the wrong guesses was counted, and counting works as before.
        try await setFileSizeLimit(of: mock.pid, to: nil)
        #expect(try await calls.key(created.keyId, secret: "right").status == 200)
        for _ in 0..<3 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
        #expect(try await calls.key(created.keyId, secret: "right").status == 204)

        mock.signal(SIGTERM)
        if try await mock.waitForExit() == nil { mock.signal(SIGKILL) }
        let text = try await onOwnThread {
            String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        let lines = text.split(separator: "\n").filter { $0.contains("attempt refused unchecked") }
        #expect(lines.count == refused, "one error line per refused attempt:\n\(text)")
        #expect(lines.allSatisfy { $0.contains(" error ") })
        #expect(!text.contains("right") && !text.contains("wrong-") && !text.contains(created.longSecret))
    }

    @Test("an attempt whose count cannot be stored answers 503 unchecked, logged once at error, and changes no count")
    func countNotStored() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        configuration.logger = capture.logger(level: .warning)
        let database = directory.appendingPathComponent("state.sqlite").path
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
            // Another connection makes every change of a count fail.
            try await runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("CREATE TRIGGER fail BEFORE UPDATE ON key BEGIN SELECT RAISE(FAIL, 'disk full'); END")
                db.commit()
                """,
                arguments: [database]
            )
            for secret in ["wrong", "wrong", "wrong", "s3cret"] {
                let answer = try await calls.key(created.keyId, secret: secret)
                #expect(answer.status == 503)
                #expect(String(decoding: answer.body, as: UTF8.self) == Self.unavailableBody)
            }
            try await runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("DROP TRIGGER fail")
                db.commit()
                """,
                arguments: [database]
            )
            // One wrong attempt before the failure, none during it: two more lock, not one.
            #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
            #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 204)
        }
        let loud = capture.lines.filter { $0.level >= .warning }
        #expect(
            loud.map(\.message) == Array(repeating: "attempt refused unchecked: its count cannot be written", count: 4)
        )
        #expect(loud.allSatisfy { $0.level == .error && $0.metadata["keyid"] != nil })
    }

    /// Sets the soft RLIMIT_FSIZE of process `pid` to `bytes` (`nil`: back to its hard limit), as `prlimit(1)` would.
    private func setFileSizeLimit(of pid: Int32, to bytes: Int?) async throws {
        try await runPython(
            """
            import resource, sys
            pid = int(sys.argv[1])
            _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
            soft = hard if sys.argv[2] == "none" else int(sys.argv[2])
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))
            """,
            arguments: ["\(pid)", bytes.map(String.init) ?? "none"]
        )
    }
}
