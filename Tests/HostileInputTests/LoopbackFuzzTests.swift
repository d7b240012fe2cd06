#if canImport(Glibc)
import Foundation
import PropertyBased
import Testing
import VaultTestSupport

@testable import CredentialVault

/// What arrives over loopback sockets, where any local process can write: the redirect listener's request parsing
/// (the bytes a connection sends, then its request line). It throws nothing past its own type, never traps, and
/// only a request to the redirect path with this login's `state` ends the login. (HTTP answers are parsed by
/// SwiftNIO's HTTP decoder inside AsyncHTTPClient; TransportBehaviourTests covers the transport's side.)
@Suite("hostile input: loopback request parser", .tags(.fuzz), .enabled(inTier: .fuzz))
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
}
#endif
