import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultCrypto
import VaultTestSupport

/// Protocol 2 (issue 27) over real HTTP against the mock in this process, on its SQLite state: the status table,
/// the counting rule and what the database holds.
@Suite("Key service protocol 2: the calls, the count and the row")
struct KeyServiceV2Tests {
    let http = HTTPClient()

    @Test("createkey, enroll, evaluate, confirm: the right password gets the key createkey gave, and its long secret")
    func roundTrip() async throws {
        try await withV2Server { server, calls, _ in
            let key = try await calls.register(password: "right")
            #expect(UUID(uuidString: key.keyId) != nil)
            #expect(try Base64.decode(key.key).count == 32)
            let evaluation = try await calls.evaluate(key.keyId, password: "right")
            #expect(evaluation.answer.status == 200)
            #expect(evaluation.answer.string("keyid") == key.keyId)
            #expect(try Base64URL.decode(try #require(evaluation.nonce)).count == 32)
            // The same OPRF output as at registration: the key's OPRF key did not change.
            #expect(evaluation.output == key.output)
            let grant = try await calls.confirm(key.keyId, evaluation: evaluation)
            #expect(grant.status == 200)
            #expect(grant.string("keyid") == key.keyId)
            #expect(grant.string("key") == key.key)
            #expect(grant.string("longsecret") == key.longSecret)
            // The long secret opens the key too, over both protocols.
            #expect(try await calls.key(key.keyId, longSecret: key.longSecret).string("key") == key.key)
            let v1 = KeyServiceCalls(base: server.keyServiceURL, http: http)
            #expect(try await v1.key(key.keyId, longSecret: key.longSecret).string("key") == key.key)
        }
    }

    @Test("a wrong password makes a wrong proof: 401, and the evaluation stays counted")
    func wrongPassword() async throws {
        try await withV2Server { _, calls, state in
            let key = try await calls.register(password: "right")
            let wrong = try await calls.evaluate(key.keyId, password: "wrong")
            #expect(wrong.answer.status == 200)
            #expect(wrong.output != key.output)
            let refused = try await calls.confirm(key.keyId, evaluation: wrong)
            #expect(refused.status == 401)
            #expect(refused.string("error") == "bad_proof")
            #expect(try await state.row(key.keyId)["failures"] == "1")
            // A right login then resets it.
            let right = try await calls.evaluate(key.keyId, password: "right")
            #expect(try await state.row(key.keyId)["failures"] == "2")
            #expect(try await calls.confirm(key.keyId, evaluation: right).status == 200)
            #expect(try await state.row(key.keyId)["failures"] == "0")
        }
    }

    @Test("the third evaluation in a row is answered and locks; a right proof for it unlocks, as v1's third attempt")
    func thirdEvaluationLocks() async throws {
        try await withV2Server { _, calls, state in
            let key = try await calls.register(password: "right")
            for _ in 0..<2 { #expect(try await calls.evaluate(key.keyId, password: "wrong").answer.status == 200) }
            let third = try await calls.evaluate(key.keyId, password: "right")
            #expect(third.answer.status == 200)
            #expect(try await state.row(key.keyId)["locked"] == "1")
            let locked = try await calls.evaluate(key.keyId, password: "right")
            #expect(locked.answer.status == 403)
            #expect(locked.answer.string("error") == "key_locked")
            #expect(try await calls.key(key.keyId, longSecret: key.longSecret).status == 403)
            #expect(try await calls.confirm(key.keyId, evaluation: third).status == 200)
            #expect(try await state.row(key.keyId)["locked"] == "0")
            #expect(try await calls.evaluate(key.keyId, password: "right").answer.status == 200)
        }
    }

    @Test("a replayed proof: for the previous nonce a grant that resets nothing; once the nonce moved on twice, 401")
    func replayedProof() async throws {
        try await withV2Server { _, calls, state in
            let key = try await calls.register(password: "right")
            let first = try await calls.evaluate(key.keyId, password: "right")
            #expect(try await calls.confirm(key.keyId, evaluation: first).status == 200)
            // Two wrong evaluations since: the replay of the first proof gets its grant, and the count stays.
            for _ in 0..<2 { _ = try await calls.evaluate(key.keyId, password: "wrong") }
            let replay = try await calls.confirm(key.keyId, evaluation: first)
            #expect(replay.status == 200)
            #expect(replay.string("key") == key.key)
            #expect(try await state.row(key.keyId)["failures"] == "2")
            // A right login (the third evaluation in a row: it locks, and its confirm unlocks) moves the nonce on:
            // the first proof's nonce is not even the previous one any more.
            let second = try await calls.evaluate(key.keyId, password: "right")
            #expect(second.nonce != first.nonce)
            #expect(try await calls.confirm(key.keyId, evaluation: second).status == 200)
            let stale = try await calls.confirm(key.keyId, evaluation: first)
            #expect(stale.status == 401)
            #expect(stale.string("error") == "bad_proof")
            #expect(try await state.row(key.keyId)["failures"] == "0")
        }
    }

    @Test("invalid elements are refused with 400 before counting, and createkey stores nothing for one")
    func invalidElements() async throws {
        try await withV2Server { _, calls, state in
            let key = try await calls.register(password: "right")
            for element in Self.invalidElements() {
                let evaluated = try await calls.evaluate(key.keyId, blinded: element)
                #expect(evaluated.status == 400, "\(element.count) bytes answered \(evaluated.status)")
                let created = try await calls.createKey(blinded: element)
                #expect(created.status == 400)
            }
            #expect(try await calls.evaluate(key.keyId, blinded: Data()).status == 400)
            #expect(try await calls.post("evaluate", ["keyid": key.keyId, "blinded": "not base64url!"]).status == 400)
            #expect(try await state.row(key.keyId)["failures"] == "0")
            #expect(try await state.keys() == 1)
        }
    }

    @Test("v1's secret on a v2 key answers 409 and counts nothing; its long secret works on both")
    func v1SecretOnV2Key() async throws {
        try await withV2Server { server, calls, state in
            let key = try await calls.register(password: "right")
            let v1 = KeyServiceCalls(base: server.keyServiceURL, http: http)
            for _ in 0..<4 {
                let answer = try await v1.key(key.keyId, secret: "anything")
                #expect(answer.status == 409)
                #expect(answer.string("error") == "protocol_v2_key")
            }
            #expect(try await state.row(key.keyId)["failures"] == "0")
            #expect(try await calls.post("key", ["keyid": key.keyId, "secret": "anything"]).status == 400)
            #expect(try await state.row(key.keyId)["failures"] == "0")
            // A wrong long secret counts, on either protocol's key call.
            #expect(try await calls.key(key.keyId, longSecret: "wrong").status == 401)
            #expect(try await state.row(key.keyId)["failures"] == "1")
        }
    }

    @Test("enroll: once (409 after), the long secret checked (401, not counted), the auth key 32 bytes")
    func enrollRules() async throws {
        try await withV2Server { _, calls, state in
            let key = try await calls.register(password: "right")
            let again = try await calls.enroll(key.keyId, longSecret: key.longSecret, authKey: Data(count: 32))
            #expect(again.status == 409)
            #expect(again.string("error") == "already_enrolled")

            let blinding = try OPRF.blind(KeyServiceV2Calls.input("new"))
            let created = try await calls.createKey(blinded: blinding.blindedElement)
            let keyId = try #require(created.string("keyid"))
            let longSecret = try #require(created.string("longsecret"))
            // Not enrolled yet: nothing to evaluate with, and nothing counted.
            let early = try await calls.evaluate(keyId, blinded: blinding.blindedElement)
            #expect(early.status == 409)
            #expect(early.string("error") == "not_enrolled")
            for _ in 0..<4 {
                let wrong = try await calls.enroll(
                    keyId,
                    longSecret: String(longSecret.reversed()),
                    authKey: Data(count: 32)
                )
                #expect(wrong.status == 401)
            }
            #expect(try await calls.enroll(keyId, longSecret: longSecret, authKey: Data(count: 31)).status == 400)
            #expect(try await state.row(keyId)["failures"] == "0")
            #expect(try await state.row(keyId)["sealed_auth_key"] == "")
            #expect(try await calls.enroll(keyId, longSecret: longSecret, authKey: Data(count: 32)).status == 200)
            #expect(try await calls.evaluate(keyId, blinded: blinding.blindedElement).status == 200)
        }
    }

    @Test("v2 calls on a v1 key answer 409 and count nothing; on an unknown key 404")
    func protocolOneKeys() async throws {
        try await withV2Server { server, calls, state in
            let v1 = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let old = try await v1.newKey(secret: "s3cret")
            let blinded = try OPRF.blind(KeyServiceV2Calls.input("x")).blindedElement
            #expect(try await calls.evaluate(old.keyId, blinded: blinded).status == 409)
            #expect(
                try await calls.enroll(old.keyId, longSecret: old.longSecret, authKey: Data(count: 32)).status == 409
            )
            #expect(
                try await calls.confirm(old.keyId, nonce: Base64URL.encode(Data(count: 32)), proof: Data(count: 32))
                    .status == 409
            )
            #expect(try await calls.key(old.keyId, longSecret: old.longSecret).status == 409)
            #expect(try await state.row(old.keyId)["failures"] == "0")
            #expect(try await v1.key(old.keyId, secret: "s3cret").status == 200)

            let unknown = UUID().uuidString.lowercased()
            #expect(try await calls.evaluate(unknown, blinded: blinded).status == 404)
            #expect(try await calls.enroll(unknown, longSecret: old.longSecret, authKey: Data(count: 32)).status == 404)
            #expect(
                try await calls.confirm(unknown, nonce: Base64URL.encode(Data(count: 32)), proof: Data(count: 32))
                    .status == 404
            )
            #expect(try await calls.key(unknown, longSecret: old.longSecret).status == 404)
        }
    }

    @Test("the row holds no raw OPRF key, auth key or long secret")
    func rowHoldsNoRawSecret() async throws {
        try await withV2Server { _, calls, state in
            let input = KeyServiceV2Calls.input("right")
            let key = try await calls.register(password: "right")
            let evaluation = try await calls.evaluate(key.keyId, password: "right")
            #expect(try await calls.confirm(key.keyId, evaluation: evaluation).status == 200)
            let row = try await state.row(key.keyId)
            #expect(row["protocol"] == "2")
            #expect(row["secret_verifier"] == "")
            let stored = try [
                "key", "secret_verifier", "longsecret_verifier", "sealed_longsecret", "sealed_oprf_key",
                "sealed_auth_key", "nonce", "previous_nonce",
            ].map { try #require(row[$0]) }
            let everything = stored.joined()
            let known = [
                Hex.encode(key.authKey.copyToData()), Hex.encode(try Base64URL.decode(key.longSecret)),
                Hex.encode(Data(key.longSecret.utf8)), Hex.encode(key.output.copyToData()),
                Hex.encode(input.copyToData()),
            ]
            for secret in known { #expect(!everything.contains(secret)) }
            // No stored 32-byte value is the OPRF key: none evaluates a blinded input to what the server answers.
            let blinding = try OPRF.blind(input)
            let answer = try await calls.evaluate(key.keyId, blinded: blinding.blindedElement)
            let evaluated = try Base64URL.decode(try #require(answer.string("evaluated")))
            for value in stored where value.count == 64 {
                let candidate = SecureBytes(bytes(hex: value))
                if let product = try? OPRF.blindEvaluate(key: candidate, blindedElement: blinding.blindedElement) {
                    #expect(product != evaluated)
                }
            }
        }
    }

    @Test("v1 secrets refused on a v2 key among simultaneous evaluations: the 409s count nothing, each evaluation one")
    func refusalsAmongEvaluations() async throws {
        try await withV2Server { server, calls, state in
            let key = try await calls.register(password: "right")
            let v1 = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
            let blinded = try OPRF.blind(KeyServiceV2Calls.input("wrong")).blindedElement
            // Refusals and evaluations share the SQLite write queue's batches: a refusal takes back only its own count.
            let statuses = await withTaskGroup(of: Int.self) { group in
                for index in 0..<62 {
                    group.addTask {
                        index.isMultiple(of: 31)
                            ? await status { try await calls.evaluate(key.keyId, blinded: blinded) }
                            : await status { try await v1.key(key.keyId, secret: "secret-\(index)") }
                    }
                }
                var statuses: [Int: Int] = [:]
                for await status in group { statuses[status, default: 0] += 1 }
                return statuses
            }
            #expect(statuses == [200: 2, 409: 60])
            #expect(try await state.row(key.keyId)["failures"] == "2")
        }
    }

    @Test("the debug log of v2 calls names each decision and holds no element, nonce, proof, auth key or secret")
    func logsNoSecret() async throws {
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.logger = capture.logger(level: .trace)
        var secrets: [String] = []
        try await KeyServiceMockServer.withServer(configuration) { server in
            let calls = KeyServiceV2Calls(base: server.keyServiceV2URL, http: http)
            let input = KeyServiceV2Calls.input("right")
            let blinding = try OPRF.blind(input)
            let created = try await calls.createKey(blinded: blinding.blindedElement)
            let keyId = try #require(created.string("keyid"))
            let longSecret = try #require(created.string("longsecret"))
            let evaluated = try #require(created.string("evaluated"))
            let output = try OPRF.finalize(
                input,
                blinding: blinding,
                evaluatedElement: try Base64URL.decode(evaluated)
            )
            let authKey = try KeyServiceV2Calls.authKey(output: output, keyId: keyId).copyToData()
            #expect(try await calls.enroll(keyId, longSecret: "wrong", authKey: authKey).status == 401)
            #expect(try await calls.enroll(keyId, longSecret: longSecret, authKey: authKey).status == 200)
            let wrong = try await calls.evaluate(keyId, password: "wrong")
            #expect(try await calls.confirm(keyId, evaluation: wrong).status == 401)
            let right = try await calls.evaluate(keyId, password: "right")
            let proof = try KeyServiceV2Calls.proof(
                authKey: SecureBytes(authKey),
                keyId: keyId,
                nonce: try #require(right.nonce)
            )
            #expect(try await calls.confirm(keyId, nonce: try #require(right.nonce), proof: proof).status == 200)
            secrets = [
                Base64URL.encode(blinding.blindedElement), evaluated, longSecret, Base64URL.encode(authKey),
                Base64URL.encode(proof), try #require(right.nonce), try #require(created.string("key")),
                try #require(wrong.answer.string("evaluated")), try #require(right.answer.string("evaluated")),
            ]
        }
        let messages = capture.lines.map(\.message)
        for decision in [
            "key created", "enroll refused: wrong long secret", "key enrolled",
            "evaluated, 1 of 3 unconfirmed", "confirm refused: wrong proof or stale nonce", "confirmed: count reset",
        ] {
            #expect(messages.contains(decision), "\(decision)")
        }
        for line in capture.lines {
            for secret in secrets {
                #expect(!line.text.contains(secret), "a secret in the log line: \(line.message)")
            }
        }
    }

    /// Elements no server may evaluate: the identity, non-canonical and negative encodings (RFC 9496 appendix
    /// A.2), random bytes that are not a point, and the wrong lengths.
    static func invalidElements() -> [Data] {
        let hex = [
            String(repeating: "00", count: 32),
            "ed" + String(repeating: "ff", count: 30) + "7f",
            "f3" + String(repeating: "ff", count: 30) + "7f",
            "00" + String(repeating: "ff", count: 31),
            "01" + String(repeating: "00", count: 31),
            "01" + String(repeating: "ff", count: 30) + "7f",
        ]
        var elements = hex.map { Data(bytes(hex: $0)) }
        var random = SystemRandomNumberGenerator()
        var found = 0
        while found < 3 {
            let candidate = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
            if !OPRF.isValidElement(candidate) {
                elements.append(candidate)
                found += 1
            }
        }
        let valid = (try? OPRF.blind(KeyServiceV2Calls.input("x")).blindedElement) ?? Data(count: 32)
        elements.append(valid.prefix(31))
        elements.append(valid + [0])
        return elements
    }

    /// Runs `body` with a mock whose state lives in a directory of its own, protocol 2's calls, and its key table.
    private func withV2Server(
        _ body: (KeyServiceMockServer, KeyServiceV2Calls, KeyTable) async throws -> Void
    ) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            try await body(
                server,
                KeyServiceV2Calls(base: server.keyServiceV2URL, http: http),
                KeyTable(file: directory.appendingPathComponent("state.sqlite"))
            )
        }
    }
}

/// The mock's key table, read from its SQLite state file by another process, as an attacker with a copy would.
struct KeyTable: Sendable {
    let file: URL

    /// The row of `keyId`, each column as text: blobs in lower-case hex, NULL as "".
    func row(_ keyId: String) async throws -> [String: String] {
        let printed = try await runPython(
            """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM key WHERE keyid = ?", (sys.argv[2],)).fetchone()
            def text(value):
                if value is None: return ""
                if isinstance(value, bytes): return value.hex()
                return str(value)
            print(json.dumps({name: text(row[name]) for name in row.keys()} if row else {}))
            """,
            arguments: [file.path, keyId]
        )
        let object = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: String]
        return try #require(object)
    }

    /// How many keys the table holds.
    func keys() async throws -> Int {
        let printed = try await runPython(
            """
            import sqlite3, sys
            print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM key").fetchone()[0])
            """,
            arguments: [file.path]
        )
        return try #require(Int(printed.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}

/// The bytes of lower-case hex text.
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
        UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
    }
}
