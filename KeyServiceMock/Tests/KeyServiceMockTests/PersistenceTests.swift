import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("State: durable in a state directory")
struct PersistenceTests {
    let http = HTTPClient()

    @Test("keys, counts, locks, sessions and the signing key survive a restart")
    func survivesRestart() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory

        let (counted, locked, kid) = try await KeyServiceMockServer.withServer(configuration) { first in
            let calls = KeyServiceCalls(base: first.keyServiceURL, http: http)
            let counted = try await calls.newKey(secret: "a")
            let locked = try await calls.newKey(secret: "b")
            for _ in 0..<2 { _ = try await calls.key(counted.keyId, secret: "wrong") }
            for _ in 0..<3 { _ = try await calls.key(locked.keyId, secret: "wrong") }
            let tokens = try await OIDCClient(server: first, http: http).tokens()
            let kid = try header(of: try #require(tokens.string("access_token"))).string("kid")
            return (counted, locked, kid)
        }

        try await KeyServiceMockServer.withServer(configuration) { second in
            let again = KeyServiceCalls(base: second.keyServiceURL, http: http)
            let client = OIDCClient(server: second, http: http)
            #expect(try await again.key(locked.keyId, secret: "b").status == 204)
            #expect(try await again.key(counted.keyId, secret: "wrong").status == 401)
            #expect(try await again.key(counted.keyId, secret: "a").status == 204)
            // The refresh token's issuer carries the old port, so only the signing key and the family are checked.
            let certs = try await http.get(client.url("certs")).json.objects("keys")
            #expect(certs.first?.string("kid") == kid)
        }
    }

    @Test("a refresh token keeps working across a restart on the same port, and its family keeps rotating")
    func refreshAcrossRestart() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        let (stale, current, port) = try await KeyServiceMockServer.withServer(configuration) { first in
            let tokens = try await OIDCClient(server: first, http: http).tokens()
            let stale = try #require(tokens.string("refresh_token"))
            let current = try #require(
                try await OIDCClient(server: first, http: http).refresh(stale).string("refresh_token")
            )
            return (stale, current, try #require(first.baseURL.port))
        }

        configuration.port = port
        try await KeyServiceMockServer.withServer(configuration) { second in
            let client = OIDCClient(server: second, http: http)
            let next = try await client.refresh(current)
            #expect(next.status == 200)
            // Reuse detection survives the restart too.
            #expect(try await client.refresh(stale).string("error") == "invalid_grant")
            #expect(try await client.refresh(try #require(next.string("refresh_token"))).status == 400)
        }
    }

    @Test("a second server on the same state directory refuses to start, and starts once the first has stopped")
    func oneServerPerDirectory() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        try await KeyServiceMockServer.withServer(configuration) { _ in
            await #expect(throws: KeyServiceMockError.self) {
                try await KeyServiceMockServer.withServer(configuration) { _ in
                    Issue.record("a second server started on the same state directory")
                }
            }
        }
        try await KeyServiceMockServer.withServer(configuration) { _ in }
    }

    @Test("withServer stops the server when its body throws")
    func withServerStopsOnThrow() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        struct Thrown: Error {}
        var keyServiceURL: URL?
        await #expect(throws: Thrown.self) {
            try await KeyServiceMockServer.withServer(configuration) { server in
                keyServiceURL = server.keyServiceURL
                throw Thrown()
            }
        }
        // Stopped: the port is closed and the state directory is free again.
        let url = try #require(keyServiceURL)
        await #expect(throws: (any Error).self) {
            try await KeyServiceCalls(base: url, http: http).createKey(secret: "s")
        }
        try await KeyServiceMockServer.withServer(configuration) { _ in }
    }

    @Test("no secret is stored in a form that can be read back")
    func noSecretInDatabase() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        let secret = "a-very-recognisable-secret-0123456789"
        let created = try await KeyServiceMockServer.withServer(configuration) { server in
            try await KeyServiceCalls(base: server.keyServiceURL, http: http).newKey(secret: secret)
        }
        var everything = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            everything.append(try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        #expect(everything.range(of: Data(secret.utf8)) == nil)
        #expect(everything.range(of: Data(created.longSecret.utf8)) == nil)
        let longSecretBytes = try Base64URL.decode(created.longSecret)
        #expect(everything.range(of: longSecretBytes) == nil)
    }
}
