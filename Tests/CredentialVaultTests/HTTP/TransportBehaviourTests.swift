import CredentialVault
import Foundation
import Testing

/// What any transport must do with what a server sends, shown on the default transport over plain http to
/// 127.0.0.1 (the behaviour the removed hand-written loopback client was tested for, kept), and against hostile
/// servers that try to keep a request alive past its deadline.
@Suite("the default transport reads answers as an HTTP/1.1 client must")
struct TransportBehaviourTests {
    private static func send(_ answer: Data, limit: Int = 1 << 20) async throws -> HTTPResponse {
        try await CannedHTTPServer.with(.raw(answer)) { server in
            try await DefaultHTTPTransport.make().send(
                HTTPRequest(
                    method: "GET",
                    url: server.baseURL.appending(path: "x"),
                    timeout: 60,
                    maximumAnswerSize: limit
                )
            )
        }
    }

    @Test("a chunked body is joined, chunk extensions and the trailer section ignored")
    func chunked() async throws {
        let answer = try await Self.send(
            Data(
                ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                    + "7\r\nMozilla\r\n9;ext=1\r\nDeveloper\r\n7\r\nNetwork\r\n0\r\nTrailer: x\r\n\r\n").utf8
            )
        )
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "MozillaDeveloperNetwork")
        #expect(answer.headers["content-type"] == "text/plain")
    }

    @Test("a 100 Continue before the answer is skipped; the length frames the body")
    func interim() async throws {
        let answer = try await Self.send(
            Data("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok".utf8)
        )
        #expect(answer.status == 201)
        #expect(answer.body == Data("ok".utf8))
    }

    @Test("a redirect is handed back as the answer, not followed")
    func redirect() async throws {
        let answer = try await Self.send(
            Data("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n".utf8)
        )
        #expect(answer.status == 302)
        #expect(answer.headers["location"] == "http://127.0.0.1:1/elsewhere")
    }

    @Test(
        "a malformed or cut answer is noResponse",
        arguments: [
            "", "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
        ]
    )
    func malformed(_ text: String) async {
        let error = await #expect(throws: TransportError.self) { _ = try await Self.send(Data(text.utf8)) }
        #expect(error?.kind == .noResponse)
    }

    @Test("a body over the request's limit is answerTooLarge")
    func overLimit() async {
        let error = await #expect(throws: TransportError.self) {
            _ = try await Self.send(
                Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n".utf8),
                limit: 4
            )
        }
        #expect(error?.kind == .answerTooLarge)
    }

    @Test("a POST whose connection closes without an answer is noResponse, and is never sent again on its own")
    func noResend() async throws {
        try await CannedHTTPServer.with(.raw(Data())) { server in
            let request = HTTPRequest(
                method: "POST",
                url: server.baseURL.appending(path: "keyservice/v1/key"),
                headers: ["Content-Type": "application/json"],
                body: Data(#"{"keyid":"k","secret":"s"}"#.utf8),
                timeout: 60
            )
            let error = await #expect(throws: TransportError.self) {
                try await DefaultHTTPTransport.make().send(request)
            }
            #expect(error?.kind == .noResponse)
            #expect(error?.wasNeverSent == false)
            #expect(server.requestTargets == ["/keyservice/v1/key"])
        }
    }

    @Test("a POST on a kept connection that dies under it is not sent again: maybe sent, one copy on the wire")
    func noResendOnKeptConnection() async throws {
        try await CannedHTTPServer.with(.keepAliveThenDrop(status: 204)) { server in
            // The process's shared client (no trust roots, no proxy): the GET leaves its connection idle in the pool,
            // and the POST takes it.
            let transport = DefaultHTTPTransport.make()
            let first = try await transport.send(
                HTTPRequest(method: "GET", url: server.baseURL.appending(path: "first"), timeout: 60)
            )
            #expect(first.status == 204)
            let error = await #expect(throws: TransportError.self) {
                try await transport.send(
                    HTTPRequest(
                        method: "POST",
                        url: server.baseURL.appending(path: "keyservice/v1/key"),
                        headers: ["Content-Type": "application/json"],
                        body: Data(#"{"keyid":"k","secret":"s"}"#.utf8),
                        timeout: 60
                    )
                )
            }
            #expect(error?.kind == .noResponse)
            #expect(error?.wasNeverSent == false)
            // A resend would have gone on a new connection, where the first request is answered: the POST would
            // have succeeded, and the server would have seen it twice.
            #expect(server.requestTargets == ["/first", "/keyservice/v1/key"])
        }
    }

    @Test("a RefusingTransport (pinning where the platform cannot pin) sends nothing and says why")
    func refusingTransport() async throws {
        try await CannedHTTPServer.with(.fixed(status: 200)) { server in
            let transport = RefusingTransport(reason: "pinned trust roots are not supported here")
            let error = await #expect(throws: TransportError.self) {
                try await transport.send(HTTPRequest(method: "GET", url: server.baseURL, timeout: 60))
            }
            #expect(error?.wasNeverSent == true)
            #expect(error?.description == "no answer from 127.0.0.1: pinned trust roots are not supported here")
            #expect(server.requestTargets.isEmpty)
        }
    }

    @Test("a closed port is notConnected: the request never left, in words")
    func refused() async throws {
        try await RefusingPort.with { base in
            let request = HTTPRequest(method: "GET", url: base, timeout: 60)
            let error = await #expect(throws: TransportError.self) {
                try await DefaultHTTPTransport.make().send(request)
            }
            #expect(error?.kind == .notConnected)
            #expect(error?.wasNeverSent == true)
            #expect(error?.reason.hasPrefix("could not connect to 127.0.0.1") == true)
        }
    }

    @Test("plain http to anything but a loopback IP literal is never sent", arguments: ["localhost", "example.com"])
    func plainHTTPElsewhere(_ host: String) async throws {
        let request = HTTPRequest(method: "GET", url: try #require(URL(string: "http://\(host):1/")), timeout: 60)
        let error = await #expect(throws: TransportError.self) { try await DefaultHTTPTransport.make().send(request) }
        #expect(error?.kind == .notConnected)
    }

    /// Twenty thousand `100 Continue` heads, then the answer's body a byte every 5 ms; and heads without end, a
    /// byte every 2 ms: the hand-written client once let both run far past the deadline.
    @Test(
        "a server that trickles 100 Continue heads or the body ends at the deadline, as timedOut",
        arguments: [
            (
                String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 20_000)
                    + "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n",
                "x", UInt32(5_000)
            ),
            ("", "HTTP/1.1 100 Continue\r\n\r\n", UInt32(2_000)),
            ("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", "y", UInt32(1_000)),
        ]
    )
    func trickle(_ prefix: String, _ pattern: String, _ interval: UInt32) async throws {
        let answer = CannedHTTPServer.Answer.trickle(
            prefix: Data(prefix.utf8),
            pattern: Data(pattern.utf8),
            interval: interval
        )
        try await CannedHTTPServer.with(answer) { server in
            let request = HTTPRequest(method: "GET", url: server.baseURL, timeout: 1)
            let error = await #expect(throws: TransportError.self) {
                try await DefaultHTTPTransport.make().send(request)
            }
            #expect(error?.kind == .timedOut)
            #expect(error?.reason == "no answer within 1 s")
        }
    }
}
