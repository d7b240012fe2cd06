import CredentialVault
import Foundation
import Testing

/// A 401 with `WWW-Authenticate: Basic` is what RFC 6749 section 5.2 asks a token endpoint to send after a failed
/// HTTP Basic client authentication. On Linux, URLSession (FoundationNetworking) never completes such a request unless
/// its delegate cancels the challenge; the transport must hand the 401 over as the answer, at once.
///
/// URLSession carries everything but plain http to a loopback address (the library's own client carries that), so
/// the request goes to `localhost`, a name the transport does not take for loopback.
@Suite("a 401 that challenges URLSession is an answer, not a hang")
struct AuthenticationChallengeTests {
    @Test("401 with WWW-Authenticate: Basic over URLSession is a 401 answer with its headers")
    func basicChallenge() async throws {
        let answer = CannedHTTPServer.Answer.fixed(
            status: 401,
            headers: ["WWW-Authenticate": "Basic realm=\"token\"", "Content-Type": "application/json"],
            body: Data(#"{"error":"invalid_client"}"#.utf8)
        )
        try await CannedHTTPServer.with(answer) { server in
            let port = try #require(server.baseURL.port)
            let url = try #require(URL(string: "http://localhost:\(port)/token"))
            // Without the delegate's cancellation only the transport's timer would end the request, with a timeout
            // error instead of the answer.
            let request = HTTPRequest(
                method: "POST",
                url: url,
                headers: ["Authorization": "Basic eDp5", "Content-Type": "application/x-www-form-urlencoded"],
                body: Data("grant_type=refresh_token".utf8),
                timeout: 60
            )
            let response = try await URLSessionTransport().send(request)
            #expect(response.status == 401)
            #expect(response.headers["www-authenticate"]?.hasPrefix("Basic") == true)
        }
    }
}
