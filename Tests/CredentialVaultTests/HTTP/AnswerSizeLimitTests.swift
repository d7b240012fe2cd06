import CredentialVault
import Foundation
import Testing

@Suite("HTTP answers are read up to a limit")
struct AnswerSizeLimitTests {
    static let mebibyte = 1 << 20

    @Test("the default limit is 1 MiB")
    func defaultLimit() throws {
        let request = HTTPRequest(method: "GET", url: try #require(URL(string: "http://127.0.0.1/")))
        #expect(HTTPRequest.defaultMaximumAnswerSize == Self.mebibyte)
        #expect(request.maximumAnswerSize == Self.mebibyte)
    }

    @Test("an answer of exactly the limit arrives whole")
    func atTheLimit() async throws {
        let body = Data((0..<Self.mebibyte).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await CannedHTTPServer.with(.fixed(status: 200, body: body)) { server in
            let response = try await DefaultHTTPTransport.make().send(
                HTTPRequest(method: "GET", url: server.baseURL.appending(path: "big"), timeout: 60)
            )
            #expect(response.status == 200)
            #expect(response.body == body)
        }
    }

    @Test("an answer one byte over a request's own limit fails as answerTooLarge")
    func oneByteOver() async throws {
        let body = Data(repeating: 0x61, count: 101)
        try await CannedHTTPServer.with(.fixed(status: 200, body: body)) { server in
            let url = server.baseURL.appending(path: "small")
            let transport = DefaultHTTPTransport.make()
            let exact = try await transport.send(
                HTTPRequest(method: "GET", url: url, timeout: 60, maximumAnswerSize: 101)
            )
            #expect(exact.body == body)
            let error = await #expect(throws: TransportError.self) {
                _ = try await transport.send(HTTPRequest(method: "GET", url: url, timeout: 60, maximumAnswerSize: 100))
            }
            #expect(error?.kind == .answerTooLarge)
            #expect(error?.host == "127.0.0.1")
        }
    }

    @Test("a declared length over the limit fails as answerTooLarge, error statuses included")
    func declaredLengthOver() async throws {
        let body = Data(repeating: 0x7B, count: 2 * Self.mebibyte)
        try await CannedHTTPServer.with(.fixed(status: 500, body: body)) { server in
            let error = await #expect(throws: TransportError.self) {
                _ = try await DefaultHTTPTransport.make().send(
                    HTTPRequest(method: "GET", url: server.baseURL, timeout: 60)
                )
            }
            #expect(error?.kind == .answerTooLarge)
        }
    }

    @Test("the library turns an answer over the limit into unexpectedAnswer, not a network error")
    func libraryMapping() async throws {
        let body = Data(repeating: 0x20, count: 2 * Self.mebibyte)
        try await CannedHTTPServer.with(.fixed(status: 200, body: body)) { server in
            let vault = try server.vault()
            let error = await #expect(throws: VaultError.self) { _ = try await vault.auth.metadata() }
            #expect(error?.kind == .unexpectedAnswer)
            #expect(error?.isNetworkError == false)
            #expect(error?.isConfigurationError == false)
            #expect(error?.description.contains("larger than 1 MiB") == true)
        }
    }
}
