import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultTestSupport

@Suite("Wire format: refusals and failures, byte for byte")
struct WireFormatTests {
    let http = HTTPClient()

    /// Status, JSON body and the headers every JSON answer carries.
    private func expectJSON(
        _ answer: HTTPAnswer,
        _ status: Int,
        _ body: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.status == status, sourceLocation: sourceLocation)
        #expect(String(decoding: answer.body, as: UTF8.self) == body, sourceLocation: sourceLocation)
        #expect(answer.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        #expect(answer.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test("the key service's refusals")
    func keyServiceRefusals() async throws {
        try await KeyServiceMockServer.withServer { server in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            expectJSON(
                try await http.post(server.keyServiceURL.appendingPathComponent("key"), body: Data("nope".utf8)),
                400,
                #"{"error":"invalid_request","error_description":"the body is not a JSON object of string fields"}"#
            )
            expectJSON(
                try await calls.key(created.keyId, secret: "wrong"),
                401,
                #"{"error":"bad_password","error_description":"wrong secret"}"#
            )
            expectJSON(
                try await calls.key(UUID().uuidString.lowercased(), secret: "s3cret"),
                404,
                #"{"error":"key_missing","error_description":"no key with this keyid"}"#
            )
        }
    }

    @Test("the token endpoint's refusals")
    func tokenRefusals() async throws {
        try await KeyServiceMockServer.withServer { server in
            let token = OIDCClient(server: server, http: http).url("token")
            expectJSON(
                try await http.post(token, form: ["grant_type": "magic", "client_id": "vault"]),
                400,
                #"{"error":"unsupported_grant_type","error_description":"grant_type magic is not supported"}"#
            )
            expectJSON(
                try await http.post(token, form: ["client_id": "vault"]),
                400,
                #"{"error":"invalid_request","error_description":"the parameter grant_type is missing"}"#
            )
            expectJSON(
                try await http.post(token, form: ["grant_type": "password", "client_id": "nobody"]),
                400,
                #"{"error":"invalid_client","error_description":"unknown client_id"}"#
            )
        }
    }

    @Test("an injected internal server error")
    func injectedServerError() async throws {
        try await KeyServiceMockServer.withServer { server in
            server.faults.set(.internalServerError, for: .all)
            expectJSON(
                try await KeyServiceCalls(base: server.keyServiceURL, http: http).createKey(secret: "s"),
                500,
                #"{"error":"server_error","error_description":"fault injected: internal server error"}"#
            )
        }
    }

    @Test("a failure inside the server answers the JSON 500, logged once at error")
    func unexpectedFailure() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        configuration.logger = capture.logger(level: .warning)
        try await KeyServiceMockServer.withServer(configuration) { server in
            // Another connection makes every new session fail to be stored.
            try await runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("CREATE TRIGGER fail BEFORE INSERT ON session BEGIN SELECT RAISE(FAIL, 'disk full'); END")
                db.commit()
                """,
                arguments: [directory.appendingPathComponent("state.sqlite").path]
            )
            for _ in 0..<3 {
                expectJSON(
                    try await OIDCClient(server: server, http: http).passwordLogin(),
                    500,
                    #"{"error":"server_error","error_description":"internal error"}"#
                )
            }
        }
        let errors = capture.lines.filter { $0.level >= .warning }
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { $0.level == .error && $0.message == "request failed" })
    }
}
