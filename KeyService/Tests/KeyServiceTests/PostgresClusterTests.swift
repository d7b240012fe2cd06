import Foundation
import Testing
import VaultPOSIX
import VaultTestSupport

/// `keyservice` as teams run it: several instances on one private PostgreSQL behind Debian's nginx (the operator
/// page's configuration), spoken to over HTTP as any client would.
@Suite("keyservice instances on PostgreSQL behind nginx", .tags(.alone), .enabled(inTier: .alone), .serialized)
struct PostgresClusterTests {
    @Test(
        "concurrent wrong secrets for one key through nginx over four instances: exactly three 401s",
        arguments: [200, 1_000]
    )
    func hammer(attempts: Int) async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 4, on: server) { cluster in
                let calls = cluster.calls()
                let key = try await calls.newKey(secret: "right-secret")
                let statuses = await withTaskGroup(of: Int.self) { group in
                    for _ in 0..<attempts {
                        group.addTask { await status { try await calls.key(key.keyId, secret: "wrong-secret") } }
                    }
                    var statuses: [Int: Int] = [:]
                    for await status in group { statuses[status, default: 0] += 1 }
                    return statuses
                }
                #expect(statuses == [401: 3, 204: attempts - 3])
                #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(key.keyId)'") == "3|t")
                #expect(try await calls.key(key.keyId, secret: "right-secret").status == 204)
            }
        }
    }

    @Test("a locked key stays locked after kill -9 of every instance")
    func lockSurvivesKill() async throws {
        try await PostgresServer.with { server in
            let secrets = KeyServiceCluster.Secrets()
            let keyId = try await KeyServiceCluster.with(instances: 4, on: server, secrets: secrets) { cluster in
                let calls = cluster.calls()
                let key = try await calls.newKey(secret: "right-secret")
                for _ in 0..<3 { #expect(try await calls.key(key.keyId, secret: "wrong-secret").status == 401) }
                cluster.killAll()
                return key.keyId
            }
            try await KeyServiceCluster.with(instances: 4, on: server, secrets: secrets) { cluster in
                let calls = cluster.calls()
                for _ in 0..<8 {
                    let answer = try await calls.key(keyId, secret: "right-secret")
                    #expect(answer.status == 204)
                }
            }
            #expect(try await server.psql("SELECT failures, locked FROM key WHERE keyid = '\(keyId)'") == "3|t")
        }
    }

    @Test("an instance killed mid-request: no answered count lost, none counted twice")
    func instanceKilledMidRequest() async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 4, on: server) { cluster in
                try await Self.killMidRequest(cluster, server: server)
            }
        }
    }

    private static func killMidRequest(_ cluster: KeyServiceCluster, server: PostgresServer) async throws {
        let calls = cluster.calls()
        let keyIds = try await newKeys(50, calls: calls)
        // Two wrong secrets per key, below the lock: every attempt that reaches the database is counted.
        let answers = await wrongAttempts(keyIds, calls: calls, victim: cluster.instances[0].child)
        let counted = try await failures(on: server)
        var seen: [Int: Int] = [:]
        for keyId in keyIds {
            var wrong = 0
            var unknown = 0
            for answer in answers where answer.keyId == keyId {
                seen[answer.status, default: 0] += 1
                if answer.status == 401 { wrong += 1 }
                // An answer nginx could not get (502: the instance died after it took the request; 504: it had not
                // answered within nginx's read timeout) may or may not have been counted; nothing else is unknown.
                if answer.status == 502 || answer.status == 504 { unknown += 1 }
            }
            let failures = counted[keyId] ?? -1
            #expect(failures >= wrong, "a 401 the client saw is not counted")
            #expect(failures <= wrong + unknown, "an attempt was counted twice")
        }
        #expect(Set(seen.keys).isSubset(of: [401, 502, 504]), "unexpected answers: \(seen)")
        // The case this test names happened: the instance died holding requests nginx had passed it. The second wave
        // makes it certain: nginx hands about a quarter of it to the stopped instance, which holds it unanswered.
        let lost = seen[502, default: 0] + seen[504, default: 0]
        #expect(lost >= 1, "the kill found no request in flight on the instance: \(seen)")
        print("PROOF postgres-kill: \(seen[401, default: 0]) answered 401, \(lost) lost to the kill")
    }

    private static func newKeys(_ count: Int, calls: KeyServiceCalls) async throws -> [String] {
        var keyIds: [String] = []
        for _ in 0..<count { keyIds.append(try await calls.newKey(secret: "right-secret").keyId) }
        return keyIds
    }

    /// One wrong secret for each key id at once, twice. Once 10 answers of the first wave have come, `victim` is
    /// stopped (SIGSTOP: wherever it is, mid-request or mid-transaction) and the second wave goes out, so nginx passes
    /// the stopped instance requests it holds; once 10 answers of the second wave have come, its process group is
    /// killed (SIGKILL, which a stopped process takes at once).
    private static func wrongAttempts(
        _ keyIds: [String],
        calls: KeyServiceCalls,
        victim: TestProcess
    ) async -> [(keyId: String, status: Int)] {
        await withTaskGroup(of: (keyId: String, status: Int, wave: Int).self) { group in
            func send(wave: Int) {
                for keyId in keyIds {
                    group.addTask { (keyId, await status { try await calls.key(keyId, secret: "wrong-secret") }, wave) }
                }
            }
            send(wave: 1)
            var answers: [(keyId: String, status: Int)] = []
            var answeredInWave = [1: 0, 2: 0]
            for await answer in group {
                answers.append((answer.keyId, answer.status))
                answeredInWave[answer.wave, default: 0] += 1
                if answer.wave == 1 && answeredInWave[1] == 10 {
                    victim.signal(SIGSTOP)
                    send(wave: 2)
                }
                if answer.wave == 2 && answeredInWave[2] == 10 { victim.killGroup() }
            }
            return answers
        }
    }

    /// Each key's count of wrong attempts, as the database holds it.
    private static func failures(on server: PostgresServer) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try await server.psql("SELECT keyid || ' ' || failures FROM key").split(separator: "\n") {
            let parts = line.split(separator: " ")
            counts[String(parts[0])] = Int(parts[1])
        }
        return counts
    }

    @Test("the database unreachable: 503, the credential never checked, /readyz 503")
    func databaseUnreachable() async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 2, on: server) { cluster in
                let calls = cluster.calls()
                let key = try await calls.newKey(secret: "right-secret")
                #expect(try await calls.key(key.keyId, secret: "wrong-secret").status == 401)
                await server.stop()
                for secret in ["right-secret", "wrong-secret", "wrong-secret", "wrong-secret"] {
                    #expect(try await calls.key(key.keyId, secret: secret).status == 503)
                }
                #expect(try await calls.createKey(secret: "another").status >= 500)
                #expect(try await cluster.http.get(URL(string: cluster.nginx.baseURL + "/readyz")!).status == 503)
                try await server.start()
                // Nothing was counted while it was down: the one wrong attempt before, then this right one.
                var answer = 0
                for _ in 0..<100 where answer != 200 {
                    answer = try await calls.key(key.keyId, secret: "right-secret").status
                    if answer == 503 { try await Task.sleep(for: .milliseconds(200)) }
                }
                #expect(answer == 200)
                #expect(try await server.psql("SELECT failures FROM key WHERE keyid = '\(key.keyId)'") == "0")
            }
        }
    }

    @Test("two instances racing to create keys for one client: the per-client limit is exact across them")
    func creationRace() async throws {
        try await PostgresServer.with { server in
            try await KeyServiceCluster.with(instances: 2, on: server, arguments: ["--max-keys-per-client", "1"]) {
                cluster in
                let calls = cluster.calls()
                let statuses = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<40 {
                        group.addTask { await status { try await calls.createKey(secret: "secret-\(index)") } }
                    }
                    var statuses: [Int: Int] = [:]
                    for await status in group { statuses[status, default: 0] += 1 }
                    return statuses
                }
                #expect(statuses == [200: 1, 429: 39])
                let keys = try await server.psql("SELECT count(*) FROM key")
                #expect(keys == "1")
            }
        }
    }
}
