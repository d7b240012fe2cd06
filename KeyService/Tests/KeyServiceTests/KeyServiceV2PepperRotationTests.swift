import Foundation
import Testing
import VaultCrypto
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Protocol 2 keys and pepper rotation on `keyservice` over SQLite: a key under an older pepper moves to the newest
/// at a right confirm (no client secret needed), and keeps its OPRF key, so its logins give the same output.
@Suite("keyservice protocol 2: pepper rotation")
struct KeyServiceV2PepperRotationTests {
    let http = HTTPClient()

    @Test("a right confirm under the newest pepper reseals the key; it still evaluates to the same OPRF output")
    func rotation() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = KeyServiceExecutableTests.sqlite(directory)
        let database = ["--database", arguments[1]]
        let file = String(arguments[1].dropFirst("sqlite:".count))

        let first = try await KeyServiceProcess.launch(arguments)
        let before = KeyServiceV2Calls(base: first.baseURL.appendingPathComponent("keyservice/v2"), http: http)
        let key = try await before.register(password: "right")
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)
        #expect(try await PepperRotationTests.peppers(database) == ["pepper 1: 1 key"])
        let sealedBefore = try await Self.row(key.keyId, in: file)

        let added = try await KeyServiceProcess.run(["new-pepper", "--secrets-dir", arguments[3]])
        #expect(added.outputText.hasPrefix("pepper 2 written"), "\(added.errorText)")

        let second = try await KeyServiceProcess.launch(arguments)
        let calls = KeyServiceV2Calls(base: second.baseURL.appendingPathComponent("keyservice/v2"), http: http)
        // A wrong password's confirm moves nothing; the right one's grant comes from the old pepper's seals.
        let wrong = try await calls.evaluate(key.keyId, password: "wrong")
        #expect(try await calls.confirm(key.keyId, evaluation: wrong).status == 401)
        let right = try await calls.evaluate(key.keyId, password: "right")
        #expect(right.output == key.output)
        let grant = try await calls.confirm(key.keyId, evaluation: right)
        #expect(grant.status == 200)
        #expect(grant.string("key") == key.key)
        #expect(grant.string("longsecret") == key.longSecret)

        // Moved: the same OPRF output, a right proof, the long secret, all under pepper 2.
        let after = try await calls.evaluate(key.keyId, password: "right")
        #expect(after.output == key.output)
        let again = try await calls.confirm(key.keyId, evaluation: after)
        #expect(again.status == 200)
        #expect(again.string("key") == key.key)
        #expect(try await calls.key(key.keyId, longSecret: key.longSecret).string("key") == key.key)
        let metrics = try await http.get(second.baseURL.appendingPathComponent("metrics")).text
        #expect(metrics.split(separator: "\n").contains("keyservice_keys_repeppered_total 1"), "\(metrics)")
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0)
        #expect(try await PepperRotationTests.peppers(database) == ["pepper 2: 1 key"])

        // Every sealed value is new, and none is a raw secret the test knows.
        let sealedAfter = try await Self.row(key.keyId, in: file)
        for column in ["longsecret_verifier", "sealed_longsecret", "sealed_oprf_key", "sealed_auth_key"] {
            #expect(sealedAfter[column] != sealedBefore[column], "\(column) was not resealed")
            #expect(sealedAfter[column]?.count == 64)
        }
        #expect(sealedAfter["key"] == sealedBefore["key"])
        let everything = sealedAfter.values.joined(separator: " ")
        for secret in [
            KeyServiceV2ClusterTests.hex(key.authKey.copyToData()),
            KeyServiceV2ClusterTests.hex(try Base64URL.decode(key.longSecret)),
            KeyServiceV2ClusterTests.hex(key.output.copyToData()),
        ] {
            #expect(!everything.contains(secret))
        }
    }

    /// The row of `keyId` in the SQLite file, read by another process: blobs in lower-case hex, NULL as "".
    static func row(_ keyId: String, in file: String) async throws -> [String: String] {
        let program = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM key WHERE keyid = ?", (sys.argv[2],)).fetchone()
            def text(value):
                if value is None: return ""
                if isinstance(value, bytes): return value.hex()
                return str(value)
            print(json.dumps({name: text(row[name]) for name in row.keys()} if row else {}))
            """
        let run = try await TestProcess.run(["/usr/bin/env", "python3", "-c", program, file, keyId])
        try #require(run.termination == .exited(0), "python3 said: \(run.errorText)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.outputText.utf8)) as? [String: String])
    }
}
