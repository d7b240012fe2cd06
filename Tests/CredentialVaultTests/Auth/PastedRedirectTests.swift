import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// The browser on another device: the user opens the authorization URL there and pastes back where it ended.
enum PastingUser {
    /// The address the browser ends at after following `url` (the issuer's redirect, which no listener receives).
    static func finalAddress(of url: URL) async -> URL? {
        guard let response = try? await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60)),
            let location = response.headers["location"]
        else { return nil }
        return URL(string: location, relativeTo: url)?.absoluteURL
    }

    /// `url` with its query item `name` set to `value`.
    static func replacing(_ name: String, with value: String, in url: URL) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = components.queryItems?.map {
            $0.name == name ? URLQueryItem(name: name, value: value) : $0
        }
        return components.url!
    }
}

@Suite("paste-the-redirect login")
struct PastedRedirectTests {
    @Test("the pasted address logs in, with no listener, and the redirect URI is sent as configured")
    func pasted() async throws {
        try await AuthFixture.with { fixture in
            let seen = URLBox()
            let userId = try await fixture.vault.auth.performOpenIDConnectFlowWithPastedRedirect { url in
                seen.set(url)
                return await PastingUser.finalAddress(of: url)
            }
            #expect(userId == "demo-user")
            let redirect = URLComponents(url: try #require(seen.get()), resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "redirect_uri" }?.value
            #expect(redirect == "http://127.0.0.1/callback")
        }
    }

    @Test("a tampered state, a wrong iss and an address that is no redirect are refused; nothing is kept")
    func refused() async throws {
        try await AuthFixture.with { fixture in
            let cases: [(String, @Sendable (URL) -> URL, String)] = [
                ("state", { PastingUser.replacing("state", with: "forged", in: $0) }, "state does not match"),
                ("iss", { PastingUser.replacing("iss", with: "https://evil.example", in: $0) }, "RFC 9207"),
                ("other", { _ in URL(string: "https://example.com/?code=x")! }, "not a redirect"),
            ]
            for (name, tamper, words) in cases {
                let error = await #expect(throws: VaultError.self, "\(name)") {
                    try await fixture.vault.auth.performOpenIDConnectFlowWithPastedRedirect { url in
                        await PastingUser.finalAddress(of: url).map(tamper)
                    }
                }
                #expect(error?.kind == .openIDConnectFailed)
                #expect(error?.description.contains(words) == true, "\(String(describing: error))")
                #expect(await fixture.vault.auth.isLoggedIn == false)
            }
            let none = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performOpenIDConnectFlowWithPastedRedirect { _ in nil }
            }
            #expect(none?.kind == .openIDConnectFailed)
        }
    }
}
