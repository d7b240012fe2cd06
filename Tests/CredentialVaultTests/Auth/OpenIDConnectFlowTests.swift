import CredentialVault
import Foundation
import KeyServiceMock
import Synchronization
import Testing

@Suite("OpenID Connect code flow")
struct OpenIDConnectFlowTests {
    // RFC 7636 appendix B.
    @Test("PKCE S256 matches RFC 7636 appendix B")
    func pkceVector() {
        #expect(
            PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        )
        let fresh = PKCE()
        #expect(fresh.verifier.count == 43)
        #expect(fresh.method == "S256")
        #expect(PKCE().verifier != fresh.verifier)
    }

    @Test("the authorization URL carries PKCE S256, state, nonce, scopes and a loopback redirect with a port")
    func authorizationURL() async throws {
        try await AuthFixture.with { fixture in
            let seen = URLBox()
            _ = try await fixture.vault.auth.performOpenIDConnectFlow { url in
                seen.set(url)
                await Browser.follow(url)
            }
            let url = try #require(seen.get())
            let items = Dictionary(
                uniqueKeysWithValues: (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                    ($0.name, $0.value ?? "")
                }
            )
            #expect(items["response_type"] == "code")
            #expect(items["code_challenge_method"] == "S256")
            #expect(items["code_challenge"]?.count == 43)
            #expect((items["state"]?.count ?? 0) >= 22)
            #expect((items["nonce"]?.count ?? 0) >= 22)
            #expect(items["scope"] == "openid offline_access")
            let redirect = try #require(items["redirect_uri"].flatMap(URL.init(string:)))
            #expect(redirect.host == "127.0.0.1" && (redirect.port ?? 0) > 0 && redirect.path == "/callback")
        }
    }

    @Test("a redirect with another state does not end the login: the one with this login's state does")
    func stateMismatch() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.vault.auth.performOpenIDConnectFlow { url in
                await Browser.deliver(to: url, query: "code=stolen&state=forged")
                await Browser.follow(url)
            }
            #expect(await fixture.vault.auth.currentUserId == userId)
        }
    }

    @Test("an error answer and a missing code are openIDConnectFailed, saying which")
    func errorAnswers() async throws {
        try await AuthFixture.with { fixture in
            for (query, expected) in [("error=access_denied", "access_denied"), ("", "no authorization code")] {
                let error = await #expect(throws: VaultError.self) {
                    try await fixture.vault.auth.performOpenIDConnectFlow { url in
                        let state =
                            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
                            .first { $0.name == "state" }?.value ?? ""
                        // As the issuer would send it: with its iss (RFC 9207), which it says it always sends.
                        let iss =
                            "iss="
                            + (fixture.server.issuer.absoluteString.addingPercentEncoding(
                                withAllowedCharacters: .alphanumerics
                            ) ?? "")
                        await Browser.deliver(
                            to: url,
                            query: [query, "state=\(state)", iss].filter { !$0.isEmpty }.joined(separator: "&")
                        )
                    }
                }
                #expect(error?.kind == .openIDConnectFailed)
                #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
            }
        }
    }

    @Test("a code exchanged with a wrong verifier is refused (PKCE enforced by the issuer)")
    func wrongVerifier() async throws {
        try await AuthFixture.with { fixture in
            // Take the code the issuer sends, and redeem it ourselves with another verifier.
            let captured = URLBox()
            let auth = fixture.vault.auth
            let flow = Task {
                try? await auth.performOpenIDConnectFlow { url in
                    let transport = TestTLS.transport()
                    if let response = try? await transport.send(HTTPRequest(method: "GET", url: url, timeout: 60)),
                        let location = response.headers["location"]
                    {
                        captured.set(URL(string: location))
                    }
                }
            }
            // Waits for the capture, not for a clock: the bound only keeps a broken flow from hanging the run.
            for _ in 0..<6_000 where captured.get() == nil { try await Task.sleep(for: .milliseconds(10)) }
            flow.cancel()
            _ = await flow.value
            let redirect = try #require(captured.get())
            let items = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let code = try #require(items.first { $0.name == "code" }?.value)
            let response = try await Browser.postForm(
                fixture.server.issuer.appending(path: "protocol/openid-connect/token"),
                [
                    "grant_type": "authorization_code", "client_id": "vault", "code": code,
                    "code_verifier": PKCE().verifier, "redirect_uri": "http://127.0.0.1:\(redirect.port ?? 0)/callback",
                ]
            )
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("invalid_grant"))
        }
    }
}

final class URLBox: Sendable {
    private let value = Mutex<URL?>(nil)
    func set(_ url: URL?) { value.withLock { $0 = url } }
    func get() -> URL? { value.withLock { $0 } }
}

extension Browser {
    /// Sends a hand-made redirect to the loopback listener named in the authorization URL.
    static func deliver(to authorizationURL: URL, query: String) async {
        let items = URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
        guard let redirect = items.first(where: { $0.name == "redirect_uri" })?.value,
            let url = URL(string: "\(redirect)?\(query)")
        else { return }
        _ = try? await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60))
    }
}
