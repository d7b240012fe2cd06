import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("HTTPKeyService against KeyServiceMock")
struct HTTPKeyServiceTests {
    let secret = SecureBytes(Data("derived-secret-for-tests".utf8))

    @Test("create key, then get it by secret and by long secret")
    func roundTrip() async throws {
        let server = try await KeyServiceMockServer.start()
        defer { Task { await server.stop() } }
        let client = try HTTPKeyService(baseURL: server.keyServiceURL)
        let created = try await client.createKey(secret: secret)
        #expect((16...64).contains(created.key.count))
        let longSecret = try #require(created.longSecret)
        let bySecret = try await client.getKey(keyId: created.keyId, secret: secret)
        #expect(bySecret.key == created.key)
        let byLongSecret = try await client.getKey(keyId: created.keyId, longSecret: longSecret)
        #expect(byLongSecret.key == created.key)
    }

    @Test("the server-and-realm initialiser addresses {server}/auth/realms/{realm}/keyservice/v1/")
    func realmAddressing() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.realm = "clinic"
        let server = try await KeyServiceMockServer.start(configuration)
        defer { Task { await server.stop() } }
        let client = try HTTPKeyService(server: server.baseURL, realm: "clinic")
        #expect(client.baseURL.absoluteString == server.baseURL.absoluteString + "/auth/realms/clinic/keyservice/v1/")
        _ = try await client.createKey(secret: secret)
        let wrongRealm = try HTTPKeyService(server: server.baseURL, realm: "other")
        await #expect(throws: KeyServiceError.self) { try await wrongRealm.createKey(secret: secret) }
    }

    // The key service locks on the third wrong secret but still answers that attempt 401; UserStorage
    // reports the third as locked from its own count (see UserStorageTests).
    @Test("status mapping: 401 bad password, 204 locked, 404 key missing")
    func statuses() async throws {
        let server = try await KeyServiceMockServer.start()
        defer { Task { await server.stop() } }
        let client = try HTTPKeyService(baseURL: server.keyServiceURL)
        let created = try await client.createKey(secret: secret)
        let wrong = SecureBytes(Data("wrong".utf8))
        for _ in 0..<3 {
            await #expect(throws: KeyServiceError.badPassword) {
                try await client.getKey(keyId: created.keyId, secret: wrong)
            }
        }
        await #expect(throws: KeyServiceError.keyLocked) {
            try await client.getKey(keyId: created.keyId, secret: wrong)
        }
        await #expect(throws: KeyServiceError.keyLocked) {
            try await client.getKey(keyId: created.keyId, secret: secret)
        }
        await #expect(throws: KeyServiceError.keyMissing) {
            try await client.getKey(keyId: UUID().uuidString, secret: secret)
        }
    }

    @Test("faults: 500 is unableToCreateKey, an undecodable 200 is unableToDecode, a dropped connection is badInternet")
    func faults() async throws {
        let server = try await KeyServiceMockServer.start()
        defer { Task { await server.stop() } }
        let client = try HTTPKeyService(baseURL: server.keyServiceURL)
        server.faults.set(.internalServerError, for: .keyService)
        await #expect(throws: KeyServiceError.unableToCreateKey) { try await client.createKey(secret: secret) }
        server.faults.set(.undecodableBody, for: .keyService)
        await #expect(throws: KeyServiceError.unableToDecode) { try await client.createKey(secret: secret) }
        server.faults.set(.dropConnection, for: .keyService)
        let dropped = await #expect(throws: KeyServiceError.self) { try await client.createKey(secret: secret) }
        guard case .badInternet(let host, _) = dropped else {
            Issue.record("expected badInternet, got \(String(describing: dropped))")
            return
        }
        #expect(host == "127.0.0.1")
        server.faults.set(nil, for: .keyService)
        _ = try await client.createKey(secret: secret)
    }

    @Test("a server slower than the timeout is potentiallyNoInternet")
    func timeout() async throws {
        let server = try await KeyServiceMockServer.start()
        defer { Task { await server.stop() } }
        let client = try HTTPKeyService(baseURL: server.keyServiceURL, timeout: 1)
        server.faults.set(.delay(.seconds(3)), for: .keyService)
        await #expect(throws: KeyServiceError.potentiallyNoInternet(host: "127.0.0.1")) {
            try await client.createKey(secret: secret)
        }
    }

    @Test("nothing listening is badInternet naming the host, after exactly one retry")
    func refused() async throws {
        let server = try await KeyServiceMockServer.start()
        let url = server.keyServiceURL
        await server.stop()
        let client = try HTTPKeyService(baseURL: url)
        let error = await #expect(throws: KeyServiceError.self) { try await client.createKey(secret: secret) }
        guard case .badInternet(let host, _) = error else {
            Issue.record("expected badInternet, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(error?.description.contains("127.0.0.1") == true)
    }

    @Test("plain http is refused unless the host is loopback")
    func httpsRequired() throws {
        #expect(throws: KeyServiceError.insecureURL(host: "keys.example.com")) {
            try HTTPKeyService(baseURL: URL(string: "http://keys.example.com/auth/realms/x/keyservice/v1")!)
        }
        _ = try HTTPKeyService(baseURL: URL(string: "https://keys.example.com/auth/realms/x/keyservice/v1")!)
        _ = try HTTPKeyService(baseURL: URL(string: "http://localhost:8080/auth/realms/x/keyservice/v1")!)
        _ = try HTTPKeyService(baseURL: URL(string: "http://[::1]:8080/auth/realms/x/keyservice/v1")!)
    }
}
