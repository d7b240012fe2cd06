import Foundation
import KeyServiceMock
import Testing

@Suite("Key service: malformed requests answer 400 and change no count")
struct MalformedRequestTests {
    let http = HTTPClient()

    static let malformedBodies: [(String, String)] = [
        ("not JSON", "secret=abc"),
        ("a JSON array", #"["abc"]"#),
        ("a JSON string", #""abc""#),
        ("keyid missing", #"{"secret":"wrong"}"#),
        ("both credentials missing", #"{"keyid":"KEYID"}"#),
        ("both credentials sent", #"{"keyid":"KEYID","secret":"wrong","longsecret":"wrong"}"#),
        ("secret a number", #"{"keyid":"KEYID","secret":123}"#),
        ("secret null and no longsecret", #"{"keyid":"KEYID","secret":null}"#),
        ("keyid an object", #"{"keyid":{"id":"KEYID"},"secret":"wrong"}"#),
        ("secret empty", #"{"keyid":"KEYID","secret":""}"#),
        ("truncated JSON", #"{"keyid":"KEYID","secret":"wro"#),
    ]

    @Test("a malformed key request answers 400 with a JSON error and does not count", arguments: malformedBodies)
    func malformedKeyRequest(_ name: String, _ template: String) async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            let body = template.replacingOccurrences(of: "KEYID", with: created.keyId)
            for _ in 0..<4 {
                let answer = try await http.post(
                    server.keyServiceURL.appendingPathComponent("key"),
                    body: Data(body.utf8)
                )
                #expect(answer.status == 400, "\(name)")
                #expect(answer.string("error") == "invalid_request", "\(name)")
            }
            // Four malformed requests later, two wrong secrets still leave the key open.
            for _ in 0..<2 { #expect(try await calls.key(created.keyId, secret: "wrong").status == 401) }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
        }
    }

    @Test("a body over 16 KiB answers 400 and does not count")
    func oversizedBody() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            let huge = String(repeating: "x", count: 16 * 1024)
            for _ in 0..<3 {
                let answer = try await calls.key(created.keyId, secret: huge)
                #expect(answer.status == 400)
                #expect(answer.string("error") == "invalid_request")
            }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 200)
            #expect(try await calls.createKey(secret: huge).status == 400)
        }
    }

    @Test("a wrong secret just under the size limit still counts as a wrong attempt")
    func longWrongSecret() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            let created = try await calls.newKey(secret: "s3cret")
            let long = String(repeating: "y", count: 15 * 1024)
            for _ in 0..<3 { #expect(try await calls.key(created.keyId, secret: long).status == 401) }
            #expect(try await calls.key(created.keyId, secret: "s3cret").status == 204)
        }
    }

    @Test("createkey without a secret answers 400")
    func createKeyWithoutSecret() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let url = server.keyServiceURL.appendingPathComponent("createkey")
            #expect(try await http.post(url, body: Data("{}".utf8)).status == 400)
            #expect(try await http.post(url, body: Data(#"{"secret":7}"#.utf8)).status == 400)
            #expect(try await http.post(url, body: Data("nope".utf8)).status == 400)
        }
    }
}
