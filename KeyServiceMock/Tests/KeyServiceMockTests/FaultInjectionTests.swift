import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

@Suite("Fault injection")
struct FaultInjectionTests {
    let http = HTTPClient()

    @Test("delay holds the key service's answer back while other routes answer, then answers normally")
    func delay() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            // Long enough for any machine to answer the discovery document meanwhile: with 3 s, a fresh clone's CI, its
            // two cores running the whole fast tier, once answered createkey first.
            server.faults.set(.delay(.seconds(20)), for: .keyService)
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let order = Order()
            // Ordered, not timed: the discovery document (not delayed) is answered while createkey is held back.
            async let delayed: HTTPAnswer = {
                let answer = try await calls.createKey(secret: "s3cret")
                await order.append("createkey")
                return answer
            }()
            let discovery = try await http.get(server.issuer.appending(path: ".well-known/openid-configuration"))
            await order.append("discovery")
            let answer = try await delayed
            #expect(discovery.status == 200)
            #expect(answer.status == 200)
            #expect(await order.names == ["discovery", "createkey"])
        }
    }

    /// The order in which answers arrived.
    private actor Order {
        private(set) var names: [String] = []
        func append(_ name: String) { names.append(name) }
    }

    @Test("dropConnection closes the connection with no HTTP answer, and counts nothing")
    func dropConnection() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            server.faults.set(.dropConnection, for: .keyService)
            for _ in 0..<3 {
                await #expect(throws: TestHTTP.NoAnswer.self) { try await calls.key(created.keyId, secret: "wrong") }
            }
            server.faults.set(nil, for: .keyService)
            for _ in 0..<2 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
        }
    }

    @Test("internalServerError answers 500")
    func internalServerError() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            server.faults.set(.internalServerError, for: .keyService)
            #expect(
                try await KeyServiceCalls(base: server.keyServiceURL, http: http).createKey(secret: "s").status == 500
            )
        }
    }

    @Test("undecodableBody answers 200 with a body that is not the promised JSON")
    func undecodableBody() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            server.faults.set(.undecodableBody, for: .keyService)
            let answer = try await KeyServiceCalls(base: server.keyServiceURL, http: http).createKey(secret: "s")
            #expect(answer.status == 200)
            #expect((try? JSONSerialization.jsonObject(with: answer.body)) == nil)
        }
    }

    @Test("a scope holds its fault to its own endpoints; all reaches every one; nil clears")
    func scopes() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let client = OIDCClient(server: server, http: http)
            server.faults.set(.internalServerError, for: .tokenEndpoint)
            #expect(try await client.passwordLogin().status == 500)
            #expect(try await calls.createKey(secret: "s").status == 200)
            server.faults.set(nil, for: .tokenEndpoint)
            #expect(try await client.passwordLogin().status == 200)

            server.faults.set(.internalServerError, for: .all)
            #expect(try await client.passwordLogin().status == 500)
            #expect(try await calls.createKey(secret: "s").status == 500)
            #expect(try await http.get(client.url("certs")).status == 500)
            server.faults.set(.undecodableBody, for: .keyService)
            #expect(try await calls.createKey(secret: "s").status == 200)
            server.faults.set(nil, for: .all)
            server.faults.set(nil, for: .keyService)
            #expect(try await http.get(client.url("certs")).status == 200)
        }
    }

    @Test("failedAttempts counts wrong secrets in a row, a right one resets it; an unknown key has none")
    func failedAttempts() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            #expect(await server.failedAttempts(keyId: created.keyId) == 0)
            for expected in 1...2 {
                #expect(try await calls.key(created.keyId, secret: "wrong").status == 401)
                #expect(await server.failedAttempts(keyId: created.keyId) == expected)
            }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
            #expect(await server.failedAttempts(keyId: created.keyId) == 0)
            #expect(await server.failedAttempts(keyId: "no-such-key") == nil)
        }
    }

    @Test("stall, oversizedBody and truncatedBody: no answer, a body over the size asked, a body cut; nothing counted")
    func wireFaults() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            server.faults.set(.stall(.milliseconds(300)), for: .keyService)
            await #expect(throws: TestHTTP.NoAnswer.self) { try await calls.key(created.keyId, secret: "wrong") }
            server.faults.set(.oversizedBody(bytes: 100_000), for: .keyService)
            let oversized = try await calls.key(created.keyId, secret: "wrong")
            #expect(oversized.status == 200 && oversized.body.count == 100_000)
            #expect((try? JSONSerialization.jsonObject(with: oversized.body)) != nil)
            server.faults.set(.truncatedBody, for: .keyService)
            await #expect(throws: TestHTTP.NoAnswer.self) { try await calls.key(created.keyId, secret: "wrong") }
            server.faults.set(nil, for: .keyService)
            #expect(await server.failedAttempts(keyId: created.keyId) == 0)
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
        }
    }
}
