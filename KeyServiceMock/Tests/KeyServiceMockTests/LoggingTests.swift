import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultTestSupport

@Suite("Logging: decisions at debug, never a secret")
struct LoggingTests {
    let http = HTTPClient()

    @Test("the debug log of a full login names each decision and carries none of the secrets sent or received")
    func fullLoginLogsNoSecret() async throws {
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.logger = capture.logger(level: .trace)
        let password = "password-\(UUID().uuidString)"
        configuration.users = [MockUser(username: "ann", password: password, subject: "ann-subject")]
        configuration.clients = [MockClient(clientId: "vault", redirectURIs: ["http://127.0.0.1/callback"])]
        let secret = "secret-\(UUID().uuidString)"
        let wrongSecret = "wrong-\(UUID().uuidString)"

        var secrets = [password, secret, wrongSecret]
        try await KeyServiceMockServer.withServer(configuration) { server in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: secret)
            #expect(try await calls.key(created.keyId, secret: wrongSecret).status == 401)
            let granted = try await calls.key(created.keyId, secret: secret)
            #expect(granted.status == 200)
            #expect(try await calls.key(created.keyId, longSecret: created.longSecret).status == 200)
            secrets += [created.key, created.longSecret]

            let client = OIDCClient(server: server, http: http)
            let (code, verifier) = try await client.code()
            let exchanged = try await client.exchange(code: code, verifier: verifier)
            #expect(exchanged.status == 200)
            let refreshToken = try #require(exchanged.string("refresh_token"))
            let refreshed = try await client.refresh(refreshToken)
            #expect(refreshed.status == 200)
            #expect(try await client.refresh(refreshToken).status == 400)
            let passwordLogin = try await client.passwordLogin(username: "ann", password: password)
            #expect(passwordLogin.status == 200)
            secrets += [code, verifier, refreshToken]
            for answer in [exchanged, refreshed, passwordLogin] {
                for field in ["access_token", "refresh_token", "id_token"] {
                    secrets.append(try #require(answer.string(field)))
                }
            }
        }

        let lines = capture.lines
        let messages = lines.map(\.message)
        for decision in [
            "key created", "wrong secret, 1 of 3", "key granted", "authorization code issued",
            "token issued, grant authorization_code", "token issued, grant refresh_token",
            "refresh token reuse detected: its family is revoked", "token issued, grant password",
        ] {
            #expect(messages.contains(decision), "\(decision)")
        }
        #expect(lines.filter { $0.message == "request" && $0.level == .debug }.count == 9)
        for line in lines {
            for secret in secrets {
                #expect(!line.text.contains(secret), "a secret in the log line: \(line.message)")
            }
        }
    }

    @Test("lockout is logged as it happens: each wrong secret with its count, then the lock")
    func lockoutDecisions() async throws {
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.logger = capture.logger(level: .debug)
        try await KeyServiceMockServer.withServer(configuration) { server in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            for _ in 0..<4 { _ = try await calls.key(created.keyId, secret: "wrong") }
        }
        let decisions = capture.lines.filter { $0.metadata["keyid"] != nil && $0.message != "key created" }
        #expect(
            decisions.map(\.message) == [
                "wrong secret, 1 of 3", "wrong secret, 2 of 3", "wrong secret, 3 of 3: key now locked", "key locked",
            ]
        )
        #expect(decisions.allSatisfy { $0.level == .debug && $0.metadata["credential"] == "secret" })
    }

    @Test("a normal stop logs nothing at warning or above, even with a keep-alive connection open")
    func cleanStop() async throws {
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.logger = capture.logger(level: .trace)
        try await KeyServiceMockServer.withServer(configuration) { server in
            let answer = try await KeyServiceCalls(base: server.keyServiceURL, http: http).createKey(secret: "s")
            #expect(answer.status == 200)
        }
        let loud = capture.lines.filter { $0.level >= .warning }
        #expect(loud.isEmpty, "\(loud.map(\.text))")
    }

    @Test("the default logger writes nothing below warning")
    func defaultLevel() {
        #expect(KeyServiceMockConfiguration().logger.logLevel == .warning)
    }
}
