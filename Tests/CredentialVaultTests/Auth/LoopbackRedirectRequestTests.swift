import Foundation
import Testing

@testable import CredentialVault

/// The redirect listener's reading of a request, from its bytes alone: a head ends at an empty line, more than the
/// limit is dropped, and only a GET of the redirect path with this login's `state` ends the login.
@Suite("Loopback redirect request parsing")
struct LoopbackRedirectRequestTests {
    private static let state = "c3RhdGUtb2YtdGhpcy1sb2dpbg"

    private static func verdict(_ line: String) -> LoopbackRedirectRequest.Verdict {
        LoopbackRedirectRequest.verdict(requestLine: line, path: "/callback", state: state, port: 8123)
    }

    @Test(
        "a head is complete at CRLF CRLF or LF LF, its first line is the request line, and past the limit it is dropped"
    )
    func head() {
        let line = "GET /callback?state=x HTTP/1.1"
        #expect(LoopbackRedirectRequest.head(of: Array("\(line)\r\nHost: a\r\n".utf8), maximumSize: 100) == .incomplete)
        #expect(
            LoopbackRedirectRequest.head(of: Array("\(line)\r\nHost: a\r\n\r\n".utf8), maximumSize: 100)
                == .complete(requestLine: line)
        )
        #expect(
            LoopbackRedirectRequest.head(of: Array("\(line)\n\n".utf8), maximumSize: 100)
                == .complete(requestLine: line)
        )
        #expect(LoopbackRedirectRequest.head(of: Array(repeating: 0x41, count: 101), maximumSize: 100) == .tooLarge)
        #expect(LoopbackRedirectRequest.head(of: Array(repeating: 0x41, count: 100), maximumSize: 100) == .incomplete)
    }

    @Test("only a GET of the redirect path carrying this login's state ends the login; an error redirect is one too")
    func verdicts() throws {
        let url = try #require(URL(string: "http://127.0.0.1:8123/callback?code=c&state=\(Self.state)"))
        #expect(Self.verdict("GET /callback?code=c&state=\(Self.state) HTTP/1.1") == .redirect(url, isError: false))
        guard
            case .redirect(_, isError: true) = Self.verdict(
                "GET /callback?error=access_denied&state=\(Self.state) HTTP/1.1"
            )
        else {
            Issue.record("an error redirect with this login's state does not end the login")
            return
        }
        #expect(Self.verdict("GET /callback?state=forged HTTP/1.1") == .otherLogin)
        #expect(Self.verdict("GET /callback?code=c HTTP/1.1") == .otherLogin)
        #expect(Self.verdict("GET /favicon.ico HTTP/1.1") == .notFound)
        #expect(Self.verdict("GET /callback/../callback?state=\(Self.state) HTTP/1.1") == .notFound)
        #expect(Self.verdict("POST /callback?state=\(Self.state) HTTP/1.1") == .notARequest)
        #expect(Self.verdict("GET http://evil.example/callback?state=\(Self.state) HTTP/1.1") == .notARequest)
        #expect(Self.verdict("GET /callback?state=\(Self.state)") == .notARequest)
        #expect(Self.verdict("") == .notARequest)
    }
}
