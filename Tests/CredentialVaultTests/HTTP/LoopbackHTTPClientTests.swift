#if canImport(Glibc)
import Foundation
import Testing

@testable import CredentialVault

/// The library's own HTTP/1.1 client for loopback `http`: answers framed by Content-Length, chunked or the end of
/// the connection (RFC 9112 sections 6 and 7.1), interim 1xx answers skipped, and every malformed answer a typed
/// failure, never a crash or a wrong body.
@Suite("the loopback HTTP client")
struct LoopbackHTTPClientTests {
    private static func failure(_ kind: TransportError.Kind, _ reason: String) -> TransportError {
        TransportError(kind: kind, host: "127.0.0.1", reason: reason)
    }

    private static func parse(_ text: String, limit: Int = 1 << 20) throws(TransportError) -> HTTPResponse {
        try LoopbackHTTPClient.parse(Array(text.utf8), limit: limit, failure: failure)
    }

    @Test("a chunked body is joined, chunk extensions and the trailer section ignored")
    func chunked() throws {
        let answer = try Self.parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                + "7\r\nMozilla\r\n9;ext=1\r\nDeveloper\r\n7\r\nNetwork\r\n0\r\nTrailer: x\r\n\r\n"
        )
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "MozillaDeveloperNetwork")
        #expect(answer.headers["content-type"] == "text/plain")
    }

    @Test("a 100 Continue before the answer is skipped; the length frames the body")
    func interim() throws {
        let answer = try Self.parse(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nokEXTRA"
        )
        #expect(answer.status == 201)
        #expect(answer.body == Data("ok".utf8))
    }

    @Test(
        "a malformed or cut answer is noResponse",
        arguments: [
            "", "garbage", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 abc OK\r\n\r\n", "SMTP 200 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        ]
    )
    func malformed(_ text: String) {
        let error = #expect(throws: TransportError.self) { try Self.parse(text) }
        #expect(error?.kind == .noResponse)
    }

    @Test("a chunk size larger than what came, or past the end of Int, is noResponse, never a crash")
    func hugeChunk() {
        for size in ["ffffffffffffffff", "7fffffffffffffff", "100"] {
            let error = #expect(throws: TransportError.self) {
                try Self.parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc\r\n0\r\n\r\n")
            }
            #expect(error?.kind == .noResponse)
        }
    }

    @Test("two different Content-Length values frame nothing: refused")
    func conflictingLengths() {
        let error = #expect(throws: TransportError.self) {
            try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello")
        }
        #expect(error?.kind == .noResponse)
    }

    @Test("a body over the request's limit is answerTooLarge")
    func overLimit() {
        let error = #expect(throws: TransportError.self) {
            try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", limit: 10)
        }
        #expect(error?.kind == .answerTooLarge)
    }

    @Test("a header that would start another line is refused before any connection")
    func headerInjection() async throws {
        try await RefusingPort.with { base in
            let request = HTTPRequest(
                method: "GET",
                url: base,
                headers: ["X-Test": "a\r\nInjected: yes"]
            )
            let error = await #expect(throws: TransportError.self) { try await LoopbackHTTPClient.send(request) }
            #expect(error?.reason.contains("header") == true)
        }
    }

    @Test("a closed port is notConnected: the request never left")
    func refused() async throws {
        try await RefusingPort.with { base in
            let request = HTTPRequest(method: "GET", url: base)
            let error = await #expect(throws: TransportError.self) { try await LoopbackHTTPClient.send(request) }
            #expect(error?.kind == .notConnected)
        }
    }
}
#endif
