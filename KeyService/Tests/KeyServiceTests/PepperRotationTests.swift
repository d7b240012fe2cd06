import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("keyservice: pepper rotation without locking anyone out")
struct PepperRotationTests {
    let http = HTTPClient()

    @Test("after a new pepper, old keys still open; a right secret moves a key to it; peppers counts per version")
    func rotation() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = KeyServiceExecutableTests.sqlite(directory)
        let database = ["--database", arguments[1]]

        let first = try await KeyServiceProcess.launch(arguments)
        let calls = KeyServiceCalls(base: first.keyServiceURL, http: http)
        let bySecret = try await calls.newKey(secret: "secret-a")
        let byDevice = try await calls.newKey(secret: "secret-b")
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)
        #expect(try await Self.peppers(database) == ["pepper 1: 2 keys"])

        let added = try await KeyServiceProcess.run(["new-pepper", "--secrets-dir", arguments[3]])
        #expect(added.outputText.hasPrefix("pepper 2 written"), "\(added.errorText)")

        let second = try await KeyServiceProcess.launch(arguments)
        let again = KeyServiceCalls(base: second.keyServiceURL, http: http)
        // Both old keys open; the right secret moves its key, the long secret cannot.
        let opened = try await again.key(bySecret.keyId, secret: "secret-a")
        #expect(opened.status == 200)
        #expect(opened.string("key") == bySecret.key)
        #expect(opened.string("longsecret") == bySecret.longSecret)
        #expect(try await again.key(byDevice.keyId, longSecret: byDevice.longSecret).string("key") == byDevice.key)
        let fresh = try await again.newKey(secret: "secret-c")
        // The moved key opens under the new pepper, by secret and by long secret, and still counts wrong ones.
        #expect(try await again.key(bySecret.keyId, secret: "secret-a").string("key") == bySecret.key)
        #expect(try await again.key(bySecret.keyId, longSecret: bySecret.longSecret).string("key") == bySecret.key)
        #expect(try await again.key(bySecret.keyId, secret: "wrong").status == 401)
        #expect(try await again.key(fresh.keyId, secret: "secret-c").status == 200)
        let metrics = try await http.get(second.baseURL.appendingPathComponent("metrics")).text
        #expect(metrics.split(separator: "\n").contains("keyservice_keys_repeppered_total 1"), "\(metrics)")
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0)
        #expect(try await Self.peppers(database) == ["pepper 1: 1 key", "pepper 2: 2 keys"])

        // Pepper 1 still protects a key: a service without it refuses to start.
        try FileManager.default.removeItem(
            at: URL(fileURLWithPath: arguments[3]).appendingPathComponent("pepper-1")
        )
        let refused = try await KeyServiceProcess.run(["serve", "--listen", "127.0.0.1:0"] + arguments)
        #expect(refused.termination.status != 0)
        #expect(refused.errorText.contains("keys exist under pepper version(s) 1"), "\(refused.errorText)")
    }

    @Test(
        "mid-rotation, an instance without the new pepper answers 503 for a moved key and counts nothing; one still on the old version never moves a key back"
    )
    func instancesMidRotation() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = KeyServiceExecutableTests.sqlite(directory)
        let database = ["--database", arguments[1]]
        let older = arguments[3]

        // Instance B holds pepper 1 only (made at its first start).
        let b = try await KeyServiceProcess.launch(arguments)
        let onB = KeyServiceCalls(base: b.keyServiceURL, http: http)
        let moved = try await onB.newKey(secret: "secret-a")
        _ = try await onB.newKey(secret: "secret-b")

        // A copy of B's secrets gets pepper 2: instance A makes keys under it, instance C still under pepper 1.
        let newer = directory.appendingPathComponent("secrets-newer").path
        let files = FileManager.default
        try files.createDirectory(
            atPath: newer,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700]
        )
        for name in try files.contentsOfDirectory(atPath: older) {
            try files.copyItem(atPath: older + "/" + name, toPath: newer + "/" + name)
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: newer + "/" + name)
        }
        let added = try await KeyServiceProcess.run(["new-pepper", "--secrets-dir", newer])
        try #require(added.termination.status == 0, "\(added.errorText)")
        let a = try await KeyServiceProcess.launch(database + ["--secrets-dir", newer])
        let c = try await KeyServiceProcess.launch(database + ["--secrets-dir", newer, "--pepper-version", "1"])
        let onA = KeyServiceCalls(base: a.keyServiceURL, http: http)
        let onC = KeyServiceCalls(base: c.keyServiceURL, http: http)

        #expect(try await onA.key(moved.keyId, secret: "secret-a").status == 200)
        #expect(try await Self.peppers(database) == ["pepper 1: 1 key", "pepper 2: 1 key"])

        // B cannot check a key under pepper 2: the right password and a wrong one get 503, and none is counted...
        for secret in ["secret-a", "secret-a", "secret-a", "wrong"] {
            #expect(try await onB.key(moved.keyId, secret: secret).status == 503)
        }
        // ...so two wrong passwords on A leave the key open: one counted 503 would have made the second the third.
        #expect(try await onA.key(moved.keyId, secret: "wrong").status == 401)
        #expect(try await onA.key(moved.keyId, secret: "wrong").status == 401)
        #expect(try await onA.key(moved.keyId, secret: "secret-a").status == 200)

        // C, making keys under pepper 1, opens the moved key and leaves it under pepper 2.
        #expect(try await onC.key(moved.keyId, secret: "secret-a").status == 200)
        #expect(try await Self.peppers(database) == ["pepper 1: 1 key", "pepper 2: 1 key"])

        for instance in [a, b, c] { instance.signal(SIGTERM) }
        for instance in [a, b, c] { #expect(await instance.waitForExit() == 0) }
    }

    /// What `keyservice peppers` prints, line by line.
    static func peppers(_ arguments: [String]) async throws -> [String] {
        let run = try await KeyServiceProcess.run(["peppers"] + arguments)
        try #require(run.termination.status == 0, "\(run.errorText)")
        return run.outputText.split(separator: "\n").map(String.init)
    }
}
