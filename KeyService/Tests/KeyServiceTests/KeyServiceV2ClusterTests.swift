import Foundation
import Testing
import VaultCrypto
import VaultTestSupport

/// Protocol 2 (issue 27) on `keyservice` as teams run it: four instances on one private PostgreSQL behind nginx,
/// spoken to over HTTP as any client would. The hammer floods the instances on purpose: the alone tier.
@Suite(
    "keyservice protocol 2: instances on PostgreSQL behind nginx",
    .tags(.alone),
    .enabled(inTier: .alone),
    .serialized
)
struct KeyServiceV2ClusterTests {
    @Test(
        "concurrent evaluations of a wrong password on one key through nginx over four instances: exactly three answered",
        arguments: [200, 1_000]
    )
    func hammer(attempts: Int) async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 4, on: server) { cluster in
                // Each client waits up to 120 s: the test is about counts, not speed.
                let calls = Self.calls(cluster, http: HTTPClient())
                let key = try await calls.register(password: "right")
                let blinded = try (0..<attempts).map { _ in
                    try OPRF.blind(KeyServiceV2Calls.input("wrong")).blindedElement
                }
                let statuses = await withTaskGroup(of: Int.self) { group in
                    for attempt in 0..<attempts {
                        group.addTask {
                            await status { try await calls.evaluate(key.keyId, blinded: blinded[attempt]) }
                        }
                    }
                    var statuses: [Int: Int] = [:]
                    for await status in group { statuses[status, default: 0] += 1 }
                    return statuses
                }
                #expect(statuses == [200: 3, 403: attempts - 3])
                #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(key.keyId)'") == "3|t")
                #expect(try await calls.evaluate(key.keyId, password: "right").answer.status == 403)
            }
        }
    }

    @Test(
        "the round trip over four instances: grant, wrong proof, v1's secret refused uncounted, a concurrent right pair"
    )
    func roundTrip() async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 4, on: server) { cluster in
                let calls = Self.calls(cluster, http: HTTPClient())
                let failures = { (keyId: String) async throws -> String in
                    try await server.psql("SELECT failures FROM key WHERE keyid = '\(keyId)'")
                }
                let key = try await calls.register(password: "right")
                let right = try await calls.evaluate(key.keyId, password: "right")
                #expect(right.output == key.output)
                let grant = try await calls.confirm(key.keyId, evaluation: right)
                #expect(grant.status == 200)
                #expect(grant.string("key") == key.key)
                #expect(grant.string("longsecret") == key.longSecret)

                let wrong = try await calls.evaluate(key.keyId, password: "wrong")
                #expect(try await calls.confirm(key.keyId, evaluation: wrong).status == 401)
                #expect(try await failures(key.keyId) == "1")
                let v1 = KeyServiceCalls(
                    base: URL(string: cluster.nginx.baseURL + "/keyservice/v1")!,
                    http: HTTPClient()
                )
                #expect(try await v1.key(key.keyId, secret: "anything").status == 409)
                #expect(try await failures(key.keyId) == "1")
                #expect(
                    try await calls.enroll(key.keyId, longSecret: key.longSecret, authKey: Data(count: 32)).status
                        == 409
                )

                // Two right confirms for one evaluation at once, on two instances: one resets, the other gets the
                // grant for the previous nonce; both 200, and the count is back to zero once.
                let once = try await calls.evaluate(key.keyId, password: "right")
                #expect(try await failures(key.keyId) == "2")
                let both = await withTaskGroup(of: Int.self) { group in
                    for _ in 0..<2 {
                        group.addTask { await status { try await calls.confirm(key.keyId, evaluation: once) } }
                    }
                    var statuses: [Int] = []
                    for await status in group { statuses.append(status) }
                    return statuses
                }
                #expect(both == [200, 200])
                #expect(try await failures(key.keyId) == "0")
                #expect(
                    try await server.psql(
                        "SELECT previous_nonce = decode('\(try Self.hex(once.nonce))', 'hex') FROM key WHERE keyid = '\(key.keyId)'"
                    )
                        == "t"
                )

                // What the database holds for the key: nothing a guess could be checked against without the pepper.
                let stored = try await server.psql(
                    """
                    SELECT concat_ws(' ', encode(key, 'hex'), encode(secret_verifier, 'hex'),
                        encode(longsecret_verifier, 'hex'), encode(sealed_longsecret, 'hex'),
                        encode(sealed_oprf_key, 'hex'), encode(sealed_auth_key, 'hex'), encode(nonce, 'hex'),
                        encode(previous_nonce, 'hex'), protocol::text)
                    FROM key WHERE keyid = '\(key.keyId)'
                    """
                )
                #expect(stored.hasSuffix(" 2"))
                for secret in [
                    Self.hex(key.authKey.copyToData()), Self.hex(try Base64URL.decode(key.longSecret)),
                    Self.hex(key.output.copyToData()), Self.hex(KeyServiceV2Calls.input("right").copyToData()),
                ] {
                    #expect(!stored.contains(secret))
                }
            }
        }
    }

    private static func calls(_ cluster: KeyServiceCluster, http: HTTPClient) -> KeyServiceV2Calls {
        KeyServiceV2Calls(base: URL(string: cluster.nginx.baseURL + "/keyservice/v2")!, http: http)
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    static func hex(_ base64URL: String?) throws -> String {
        hex(try Base64URL.decode(try #require(base64URL)))
    }
}
