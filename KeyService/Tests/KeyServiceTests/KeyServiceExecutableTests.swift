import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("keyservice on SQLite: the wire protocol and the lockout, over real HTTP from another process")
struct KeyServiceExecutableTests {
    let http = HTTPClient()

    @Test("createkey and key answer as TIM KeyService v1: 200, 401, 204 when locked, 404 for an unknown key")
    func statusTable() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
        let created = try await calls.newKey(secret: "s3cret")
        let right = try await calls.key(created.keyId, secret: "s3cret")
        #expect(right.status == 200)
        #expect(right.string("key") == created.key)
        #expect(right.string("longsecret") == created.longSecret)
        #expect(try await calls.key(created.keyId, longSecret: created.longSecret).string("key") == created.key)
        #expect(try await calls.key("no-such-key", secret: "s3cret").status == 404)
        for _ in 0..<3 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
        #expect(try await calls.key(created.keyId, secret: "s3cret").status == 204)
        #expect(try await calls.key(created.keyId, longSecret: created.longSecret).status == 204)
    }

    @Test("a right secret before the third wrong one resets the count")
    func rightSecretResets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
        let created = try await calls.newKey(secret: "s3cret")
        for _ in 0..<3 {
            for _ in 0..<2 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
        }
    }

    @Test("simultaneous wrong secrets on one key give exactly three 401s, and every other one the lock")
    func concurrentWrongSecrets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let attempts = 200
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
        let created = try await calls.newKey(secret: "s3cret")
        let start = AsyncStream.makeStream(of: Void.self)
        let counts = await withTaskGroup(of: Int.self) { group in
            for attempt in 0..<attempts {
                group.addTask {
                    for await _ in start.stream { break }
                    return await status { try await calls.key(created.keyId, secret: "wrong-\(attempt)") }
                }
            }
            start.continuation.finish()
            var counts: [Int: Int] = [:]
            for await status in group { counts[status, default: 0] += 1 }
            return counts
        }
        #expect(counts == [401: 3, 204: attempts - 3])
    }

    @Test("simultaneous right secrets on one key all get the key: none sees it locked by the others' counts")
    func concurrentRightSecrets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let attempts = 200
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
        let created = try await calls.newKey(secret: "s3cret")
        let start = AsyncStream.makeStream(of: Void.self)
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<attempts {
                group.addTask {
                    for await _ in start.stream { break }
                    return await status { try await calls.key(created.keyId, secret: "s3cret") }
                }
            }
            start.continuation.finish()
            var counts: [Int: Int] = [:]
            for await status in group { counts[status, default: 0] += 1 }
            return counts
        }
        #expect(counts == [200: attempts])
        // The count is back to zero: three wrong ones are needed to lock it.
        for _ in 0..<2 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
        #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
    }

    @Test("a lock and a count survive kill -9 of the server and a restart")
    func lockSurvivesKill() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let calls = KeyServiceCalls(base: first.keyServiceURL, http: http)
        let locked = try await calls.newKey(secret: "a")
        let counted = try await calls.newKey(secret: "b")
        for _ in 0..<3 { #expect(try await calls.key(locked.keyId, secret: "wrong").status == 401) }
        #expect(try await calls.key(counted.keyId, secret: "wrong").status == 401)
        first.signal(SIGKILL)
        #expect(await first.waitForExit() == 128 + SIGKILL)

        let second = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let again = KeyServiceCalls(base: second.keyServiceURL, http: http)
        #expect(try await again.key(locked.keyId, secret: "a").status == 204)
        #expect(try await again.key(counted.keyId, secret: "wrong").status == 401)
        #expect(try await again.key(counted.keyId, secret: "wrong").status == 401)
        #expect(try await again.key(counted.keyId, secret: "b").status == 204, "the first wrong one was kept")
    }

    @Test("SIGTERM stops the server with status 0")
    func stopsOnSIGTERM() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        #expect(server.readyLine.wholeMatch(of: /keyservice listening on http:\/\/127\.0\.0\.1:\d+/) != nil)
        _ = try await KeyServiceCalls(base: server.keyServiceURL, http: http).newKey(secret: "s")
        server.signal(SIGTERM)
        #expect(await server.waitForExit() == 0)
    }

    @Test("SIGTERM lets a request in flight finish and count, then stops with status 0")
    func sigtermFinishesRequestInFlight() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let created = try await KeyServiceCalls(base: server.keyServiceURL, http: http).newKey(secret: "s3cret")
        let connection = try RawConnection(port: try #require(server.baseURL.port))
        let body = #"{"keyid":"\#(created.keyId)","secret":"wrong"}"#
        let head =
            "POST /keyservice/v1/key HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n"
        let half = body.index(body.startIndex, offsetBy: body.count / 2)
        // One wrong secret whole, then the head and half the body of a second, in one write: once the first answer
        // has come, the server has read the second request's head, and that request is in flight.
        try connection.send(head + body + head + body[..<half])
        #expect(await connection.answers(1).map(\.status) == [401])
        server.signal(SIGTERM)
        try connection.send(String(body[half...]))
        #expect(await connection.answers(1).map(\.status) == [401], "the request in flight at SIGTERM was answered")
        #expect(await server.waitForExit() == 0)
        // Both wrong secrets were counted and kept: the next wrong one is the third, and it locks the key.
        let again = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let calls = KeyServiceCalls(base: again.keyServiceURL, http: http)
        #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
        #expect(try await calls.key(created.keyId, secret: "s3cret").status == 204)
    }

    @Test("/healthz, /readyz and /metrics answer; the metrics count answers, wrong secrets and locks")
    func operations() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await KeyServiceProcess.launch(Self.sqlite(directory))
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
        let created = try await calls.newKey(secret: "s3cret")
        for _ in 0..<3 { _ = try await calls.key(created.keyId, secret: "wrong") }
        #expect(try await http.get(server.baseURL.appendingPathComponent("healthz")).status == 200)
        #expect(try await http.get(server.baseURL.appendingPathComponent("readyz")).status == 200)
        let metrics = try await http.get(server.baseURL.appendingPathComponent("metrics"))
        #expect(metrics.status == 200)
        let lines = metrics.text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        func value(_ prefix: String) -> String? {
            lines.first { $0.hasPrefix(prefix) }.map { String($0.split(separator: " ").last ?? "") }
        }
        #expect(
            value(#"keyservice_requests_total{outcome="created",route="createkey"}"#) == "1"
                || value(#"keyservice_requests_total{route="createkey",outcome="created"}"#) == "1",
            "\(metrics.text)"
        )
        #expect(value("keyservice_wrong_credentials_total") == "3")
        #expect(value("keyservice_keys_locked_total") == "1")
        #expect(metrics.text.contains("keyservice_database_duration_seconds"))
        #expect(!metrics.text.contains("s3cret") && !metrics.text.contains(created.longSecret))
    }

    /// `--database sqlite:DIR/keys.sqlite --secrets-dir DIR/secrets`.
    static func sqlite(_ directory: URL) -> [String] {
        [
            "--database", "sqlite:" + directory.appendingPathComponent("keys.sqlite").path,
            "--secrets-dir", directory.appendingPathComponent("secrets").path,
        ]
    }
}
