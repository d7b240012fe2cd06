#if canImport(Glibc)
import Foundation
import PropertyBased
import Testing

@testable import CredentialVault

/// What arrives over loopback sockets, where any local process can write: the redirect listener's request parsing
/// (the bytes a connection sends, then its request line) and the loopback HTTP client's answer parsing. Neither
/// throws past its own type, none traps, and only a request to the redirect path with this login's `state` ends
/// the login.
@Suite("hostile input: loopback request and answer parsers")
struct LoopbackFuzzTests {
    static let state = "Zm9vYmFyLXN0YXRlLTE2"
    static let path = "/callback"
    /// The listener's own limit (`LoopbackRedirectReceiver.maximumRequestSize`).
    static let maximumRequestSize = 16_384

    static let requests = HostileInputs.bytes(
        seeds: [
            "GET /callback?code=abc&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /callback?error=access_denied&state=\(state)&iss=https%3A%2F%2Fissuer HTTP/1.1\r\n\r\n",
            "GET /callback?state=\(state)&state=other HTTP/1.1\n\n",
            "GET /callback?state=other&state=\(state) HTTP/1.1\r\n\r\n",
            "GET /callback?state=%5A\(state.dropFirst()) HTTP/1.1\r\n\r\n", "GET /callback?state= HTTP/1.1\r\n\r\n",
            "GET /favicon.ico HTTP/1.1\r\n\r\n", "POST /callback?state=\(state) HTTP/1.1\r\n\r\n",
            "GET http://evil.example/callback?state=\(state) HTTP/1.1\r\n\r\n",
            "GET //evil.example/callback HTTP/1.1\r\n\r\n",
            "GET /callback/../callback?state=\(state) HTTP/1.1\r\n\r\n",
            "GET /callback?state=\(state)#x HTTP/1.1\r\n\r\n",
            "GET /callback?state=\(state)  HTTP/1.1\r\n\r\n", "GET /callback?%zz=1&state=\(state) HTTP/1.1\r\n\r\n",
            "GET /callback?code=abc&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n", "\r\n\r\n", "",
        ].map { Array($0.utf8) },
        sizeCap: maximumRequestSize
    )

    @Test("every hostile redirect request is dropped, answered, or ends the login only with its state")
    func redirectRequest() async throws {
        let run = HostileInputRun(
            parser: "loopback-redirect",
            suite: "LoopbackFuzzTests",
            settings: try .fromEnvironment()
        )
        let report = await run.run(Self.requests, refusal: Never.self, describe: HostileBytes.describe) {
            bytes in
            let head = LoopbackRedirectRequest.head(of: bytes, maximumSize: Self.maximumRequestSize)
            if bytes.count > Self.maximumRequestSize, head != .tooLarge {
                throw HostileInputViolation("a request over the size limit was not refused")
            }
            guard case .complete(let line) = head else { return .refused }
            let verdict = LoopbackRedirectRequest.verdict(
                requestLine: line,
                path: Self.path,
                state: Self.state,
                port: 53_123
            )
            guard case .redirect(let url, _) = verdict else { return .refused }
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            guard line.hasPrefix("GET /"), url.host == "127.0.0.1", url.port == 53_123,
                components?.percentEncodedPath == Self.path,
                components?.queryItems?.first(where: { $0.name == "state" })?.value == Self.state
            else {
                throw HostileInputViolation("a request without this login's path and state ended the login")
            }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }

    static let answers = HostileInputs.bytes(
        seeds: [
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\nMozilla\r\n9;ext=1\r\nDeveloper\r\n0\r\nTrailer: x\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nokEXTRA",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 50) + "HTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.1 99 Low\r\n\r\n", "HTTP/1.1 600 High\r\n\r\n", "HTTP/1.1 +200 OK\r\n\r\n", "HTTP/2 200\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: \(String(repeating: "a", count: 2000))\r\n\r\nbody", "HTTP/1.1 200\r\n\r\n", "",
        ].map { Array($0.utf8) },
        sizeCap: 64 * 1024
    )

    static let answersWithLimits = Generator<([UInt8], Int), Shrink.None<([UInt8], Int)>> { rng in
        (answers.run(using: &rng), [0, 1, 16, 1 << 20].randomElement(using: &rng)!)
    }

    static func describe(_ input: ([UInt8], Int)) -> String {
        "limit \(input.1), answer \(HostileBytes.describe(input.0))"
    }

    @Test("every hostile HTTP answer is a response within its limit or a TransportError")
    func loopbackAnswer() async throws {
        let run = HostileInputRun(
            parser: "loopback-http-answer",
            suite: "LoopbackFuzzTests",
            settings: try .fromEnvironment()
        )
        let report = await run.run(
            Self.answersWithLimits,
            refusal: TransportError.self,
            describe: Self.describe
        ) { bytes, limit in
            let response = try LoopbackHTTPClient.parse(bytes, limit: limit) { kind, reason in
                TransportError(kind: kind, host: "127.0.0.1", reason: reason)
            }
            guard response.body.count <= limit, (200...599).contains(response.status) else {
                throw HostileInputViolation("a \(response.status) answer with a body of \(response.body.count) bytes")
            }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
#endif
