import CredentialVault
import Foundation
import Testing

/// A 401 with `WWW-Authenticate: Basic` is what RFC 6749 section 5.2 asks a token endpoint to send after a failed
/// HTTP Basic client authentication. A transport must hand the 401 over as the answer, at once, not answer the
/// challenge (URLSession on Linux once hung on it).
@Suite("a 401 that challenges the client is an answer, not a hang")
struct AuthenticationChallengeTests {
    @Test("401 with WWW-Authenticate: Basic is a 401 answer with its headers and body")
    func basicChallenge() async throws {
        let answer = CannedHTTPServer.Answer.fixed(
            status: 401,
            headers: ["WWW-Authenticate": "Basic realm=\"token\"", "Content-Type": "application/json"],
            body: Data(#"{"error":"invalid_client"}"#.utf8)
        )
        try await CannedHTTPServer.with(answer) { server in
            let url = server.baseURL.appending(path: "token")
            let request = HTTPRequest(
                method: "POST",
                url: url,
                headers: ["Authorization": "Basic eDp5", "Content-Type": "application/x-www-form-urlencoded"],
                body: Data("grant_type=refresh_token".utf8),
                timeout: 60
            )
            let response = try await DefaultHTTPTransport.make().send(request)
            #expect(response.status == 401)
            #expect(response.headers["www-authenticate"]?.hasPrefix("Basic") == true)
            #expect(response.body == Data(#"{"error":"invalid_client"}"#.utf8))
        }
    }
}
