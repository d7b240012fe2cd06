import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Key service: createkey is bounded per client and in total", .tags(.alone), .enabled(inTier: .alone))
struct KeyLimitTests {
    let http = HTTPClient()

    /// `createkey` sent from the loopback address `source` (127.0.0.0/8 is all this machine's), so that the
    /// server sees another client; answers the status and the body.
    private func createKey(at base: URL, from source: String) async throws -> (status: Int, body: String) {
        let printed = try await runPython(
            """
            import http.client, json, sys, urllib.parse
            url = urllib.parse.urlsplit(sys.argv[1])
            connection = http.client.HTTPConnection(url.hostname, url.port, source_address=(sys.argv[2], 0))
            connection.request("POST", url.path + "/createkey", json.dumps({"secret": "s"}),
                               {"Content-Type": "application/json"})
            answer = connection.getresponse()
            print(answer.status)
            print(answer.read().decode())
            """,
            arguments: [base.absoluteString, source]
        )
        let lines = printed.split(separator: "\n", maxSplits: 1).map(String.init)
        return (Int(lines.first ?? "") ?? 0, lines.count > 1 ? lines[1].trimmingCharacters(in: .newlines) : "")
    }

    @Test("a client over its limit gets 429, another client still gets keys, and a full store answers 507")
    func limits() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.maximumKeysPerClient = 2
        configuration.maximumKeys = 3
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let base = server.keyServiceURL
            #expect(try await createKey(at: base, from: "127.0.0.1").status == 200)
            #expect(try await createKey(at: base, from: "127.0.0.1").status == 200)
            let tooMany = try await createKey(at: base, from: "127.0.0.1")
            #expect(tooMany.status == 429)
            #expect(
                tooMany.body
                    == #"{"error":"too_many_keys","error_description":"this client has created 2 keys, the most it may hold"}"#
            )
            #expect(try await createKey(at: base, from: "127.0.0.2").status == 200)
            let full = try await createKey(at: base, from: "127.0.0.3")
            #expect(full.status == 507)
            #expect(
                full.body
                    == #"{"error":"key_store_full","error_description":"the key service holds 3 keys, the most it may hold"}"#
            )
        }
    }

    @Test("the defaults: 10,000 keys per client and 100,000 in all")
    func defaults() {
        let configuration = KeyServiceMockConfiguration()
        #expect(configuration.maximumKeysPerClient == 10_000)
        #expect(configuration.maximumKeys == 100_000)
    }

    @Test("a createkey that failed to store its key holds no place under the limit")
    func failuresTakeNoPlace() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        configuration.maximumKeysPerClient = 1
        let database = directory.appendingPathComponent("state.sqlite").path
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            try await runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("CREATE TRIGGER fail BEFORE INSERT ON key BEGIN SELECT RAISE(FAIL, 'disk full'); END")
                db.commit()
                """,
                arguments: [database]
            )
            for _ in 0..<3 { #expect(try await calls.createKey(secret: "s").status == 500) }
            try await runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("DROP TRIGGER fail")
                db.commit()
                """,
                arguments: [database]
            )
            #expect(try await calls.createKey(secret: "s").status == 200)
            #expect(try await calls.createKey(secret: "s").status == 429)
        }
    }

    @Test("the limits count the keys already in the state directory after a restart")
    func limitsSurviveRestart() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        configuration.maximumKeysPerClient = 2
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            for _ in 0..<2 { #expect(try await calls.createKey(secret: "s").status == 200) }
        }
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            #expect(try await calls.createKey(secret: "s").status == 429)
        }
        configuration.maximumKeysPerClient = 10
        configuration.maximumKeys = 2
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            #expect(try await calls.createKey(secret: "s").status == 507)
        }
    }

    @Test("concurrent createkey calls never pass the limit together")
    func concurrentCreations() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.maximumKeysPerClient = 10
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { await status { try await calls.createKey(secret: "s") } } }
                var counts: [Int: Int] = [:]
                for await status in group { counts[status, default: 0] += 1 }
                return counts
            }
            #expect(statuses == [200: 10, 429: 40])
        }
    }

    @Test("a limit that is not positive is refused at start")
    func nonPositiveLimit() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.maximumKeysPerClient = 0
        await #expect(throws: KeyServiceMockError.self) {
            try await KeyServiceMockServer.withServer(configuration) { _ in }
        }
        configuration = KeyServiceMockConfiguration()
        configuration.maximumKeys = -1
        await #expect(throws: KeyServiceMockError.self) {
            try await KeyServiceMockServer.withServer(configuration) { _ in }
        }
    }

    @Test("keyservice-mock takes the limits as --max-keys-per-client and --max-keys")
    func executableLimits() async throws {
        let mock = try await MockProcess.launch(["--max-keys-per-client", "1", "--max-keys", "5"])
        defer { mock.signal(SIGKILL) }
        let calls = KeyServiceCalls(base: mock.keyServiceURL, http: http)
        #expect(try await calls.createKey(secret: "s").status == 200)
        #expect(try await calls.createKey(secret: "s").status == 429)
        let refused = try await MockProcess.run(["--max-keys", "0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--max-keys"))
    }
}
