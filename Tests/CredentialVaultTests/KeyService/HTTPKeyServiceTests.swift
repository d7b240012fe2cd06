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
        try await KeyServiceMockServer.withServer { server in
            let client = try HTTPKeyService(baseURL: server.keyServiceURL, timeout: VaultFixture.requestTimeout)
            let created = try await client.createKey(secret: secret)
            #expect((16...64).contains(created.key.count))
            let longSecret = try #require(created.longSecret)
            let bySecret = try await client.getKey(keyId: created.keyId, secret: secret)
            #expect(bySecret.key == created.key)
            let byLongSecret = try await client.getKey(keyId: created.keyId, longSecret: longSecret)
            #expect(byLongSecret.key == created.key)
        }
    }

    @Test("the server-and-realm initialiser addresses {server}/auth/realms/{realm}/keyservice/v1/")
    func realmAddressing() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.realm = "clinic"
        try await KeyServiceMockServer.withServer(configuration) { server in
            let client = try HTTPKeyService(
                server: server.baseURL,
                realm: "clinic",
                timeout: VaultFixture.requestTimeout
            )
            #expect(
                client.baseURL.absoluteString == server.baseURL.absoluteString + "/auth/realms/clinic/keyservice/v1/"
            )
            _ = try await client.createKey(secret: secret)
            let wrongRealm = try HTTPKeyService(
                server: server.baseURL,
                realm: "other",
                timeout: VaultFixture.requestTimeout
            )
            let error = await #expect(throws: VaultError.self) { try await wrongRealm.createKey(secret: secret) }
            #expect(error?.isKeyServiceError == true)
            #expect(error?.isWrongPassword == false)
        }
    }

    // The key service locks on the third wrong secret but still answers that attempt 401; UserStorage
    // reports the third as locked from its own count (see UserStorageTests).
    @Test("status mapping: 401 is a wrong password, 204 a locked key, 404 a missing key")
    func statuses() async throws {
        try await KeyServiceMockServer.withServer { server in
            let client = try HTTPKeyService(baseURL: server.keyServiceURL, timeout: VaultFixture.requestTimeout)
            let created = try await client.createKey(secret: secret)
            let wrong = SecureBytes(Data("wrong".utf8))
            for _ in 0..<3 {
                let error = await #expect(throws: VaultError.self) {
                    try await client.getKey(keyId: created.keyId, secret: wrong)
                }
                #expect(error?.kind == .wrongPassword)
                #expect(error?.isWrongPassword == true)
                #expect(error?.httpStatus == 401)
            }
            for attempt in [wrong, secret] {
                let error = await #expect(throws: VaultError.self) {
                    try await client.getKey(keyId: created.keyId, secret: attempt)
                }
                #expect(error?.kind == .keyLocked)
                #expect(error?.isKeyLocked == true)
            }
            let missing = await #expect(throws: VaultError.self) {
                try await client.getKey(keyId: UUID().uuidString, secret: secret)
            }
            #expect(missing?.kind == .keyMissing)
            #expect(missing?.httpStatus == 404)
            #expect(missing?.isKeyServiceError == true)
        }
    }

    /// Answers every request with `body` (status 200).
    struct CannedAnswer: HTTPTransport {
        let body: String
        func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
            HTTPResponse(status: 200, body: Data(body.utf8))
        }
    }

    @Test(
        "the key answer's shape: keyid and key strings, longsecret a string when present (null or empty is none)",
        arguments: [
            (#"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw==","longsecret":"ls"}"#, "ls"),
            (#"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw==","longsecret":null}"#, nil),
            (#"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw==","longsecret":""}"#, nil),
            ("\u{FEFF}" + #"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw=="}"#, nil),
        ] as [(String, String?)]
    )
    func answerShape(body: String, longSecret: String?) async throws {
        let client = try HTTPKeyService(
            baseURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
            transport: CannedAnswer(body: body)
        )
        let key = try await client.getKey(keyId: "k", secret: secret)
        #expect(key.keyId == "k" && key.key == SecureBytes(Data(0..<16)))
        #expect(key.longSecret == longSecret.map { SecureBytes(Data($0.utf8)) })
    }

    @Test(
        "no key: longsecret not a string, keyid missing or empty, a key of the wrong size, a repeated name",
        arguments: [
            #"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw==","longsecret":5}"#,
            #"{"key":"AAECAwQFBgcICQoLDA0ODw=="}"#, #"{"keyid":"","key":"AAECAwQFBgcICQoLDA0ODw=="}"#,
            #"{"keyid":"k","key":"AAEC"}"#, #"{"keyid":"k","keyid":"j","key":"AAECAwQFBgcICQoLDA0ODw=="}"#,
        ]
    )
    func notAKey(body: String) async throws {
        let client = try HTTPKeyService(
            baseURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
            transport: CannedAnswer(body: body)
        )
        let error = await #expect(throws: VaultError.self) { try await client.getKey(keyId: "k", secret: secret) }
        #expect(error?.kind == .unexpectedAnswer, "\(String(describing: error))")
    }

    @Test("faults: a 500 is a refusal, an undecodable 200 an unexpected answer, a dropped connection a network error")
    func faults() async throws {
        try await KeyServiceMockServer.withServer { server in
            let client = try HTTPKeyService(baseURL: server.keyServiceURL, timeout: VaultFixture.requestTimeout)
            server.faults.set(.internalServerError, for: .keyService)
            let refused = await #expect(throws: VaultError.self) { try await client.createKey(secret: secret) }
            #expect(refused?.kind == .serverRefused)
            #expect(refused?.httpStatus == 500)
            #expect(refused?.description.contains("creating a key") == true)

            server.faults.set(.undecodableBody, for: .keyService)
            let garbage = await #expect(throws: VaultError.self) { try await client.createKey(secret: secret) }
            #expect(garbage?.kind == .unexpectedAnswer)

            server.faults.set(.dropConnection, for: .keyService)
            let dropped = await #expect(throws: VaultError.self) { try await client.createKey(secret: secret) }
            #expect(dropped?.kind == .unreachable)
            #expect(dropped?.isNetworkError == true)
            #expect(dropped?.host == "127.0.0.1")

            server.faults.set(nil, for: .keyService)
            _ = try await client.createKey(secret: secret)
        }
    }

    @Test("a server slower than the timeout is timedOut, a network error, and is not retried")
    func timeout() async throws {
        try await KeyServiceMockServer.withServer { server in
            let transport = CountingTransport()
            let client = try HTTPKeyService(baseURL: server.keyServiceURL, transport: transport, timeout: 1)
            server.faults.set(.delay(.seconds(3)), for: .keyService)
            let error = await #expect(throws: VaultError.self) { try await client.createKey(secret: secret) }
            #expect(error?.kind == .timedOut)
            #expect(error?.isNetworkError == true)
            #expect(error?.host == "127.0.0.1")
            // A timeout may have reached the server and counted an attempt.
            #expect(transport.count(endingWith: "/createkey") == 1)
        }
    }

    @Test("nothing listening is unreachable, naming the host, after exactly one retry")
    func refused() async throws {
        try await RefusingPort.with { base in
            let transport = CountingTransport()
            let client = try HTTPKeyService(server: base, realm: "demo", transport: transport)
            let error = await #expect(throws: VaultError.self) { try await client.createKey(secret: secret) }
            #expect(error?.kind == .unreachable)
            #expect(error?.isKeyServiceError == true)
            #expect(error?.host == "127.0.0.1")
            #expect(error?.description.contains("127.0.0.1") == true)
            #expect(transport.count(endingWith: "/createkey") == 2)
        }
    }
}
