import CredentialVault
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The harness and the real django-oauth-toolkit server behave as the interop tests assume,
/// checked over real https (nginx in front of DOT) with the library's default transport and the
/// test authority.
///
/// Serialized: each test starts its own django-oauth-toolkit (Python, SQLite migrations); several at once on
/// two cores only slow each other down.
@Suite("django-oauth-toolkit harness", .serialized, .needsDjangoOAuthToolkit)
struct DjangoOAuthToolkitHarnessTests {
    @Test("OIDC discovery omits revocation_endpoint; the RFC 8414 document has it")
    func discoveryDocuments() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        defer { dot.stop() }
        #expect(dot.issuer.absoluteString == dot.baseURL.absoluteString + "/o")
        // nginx serves https; DOT behind it plain http, and names https URLs from X-Forwarded-Proto.
        #expect(dot.issuer.scheme == "https")
        #expect(dot.backendURL.scheme == "http" && dot.backendURL.port != dot.baseURL.port)

        let discovery = try await getJSON(dot.issuer.appendingPathComponent(".well-known/openid-configuration"))
        #expect(discovery["issuer"] as? String == dot.issuer.absoluteString)
        #expect(discovery["token_endpoint"] as? String == "\(dot.issuer.absoluteString)/token/")
        #expect(discovery["end_session_endpoint"] as? String == "\(dot.issuer.absoluteString)/logout/")
        #expect(discovery["revocation_endpoint"] == nil)
        #expect(discovery["code_challenge_methods_supported"] as? [String] == ["S256"])

        let revocation = "\(dot.issuer.absoluteString)/revoke_token/"
        let underIssuer = try await getJSON(dot.issuer.appendingPathComponent(".well-known/oauth-authorization-server"))
        #expect(underIssuer["issuer"] as? String == dot.issuer.absoluteString)
        #expect(underIssuer["revocation_endpoint"] as? String == revocation)
        let rfc8414 = try await getJSON(dot.baseURL.appendingPathComponent(".well-known/oauth-authorization-server/o"))
        #expect(rfc8414["revocation_endpoint"] as? String == revocation)
    }

    @Test("in DOT's default configuration the password grant gives an opaque access token and refresh token")
    func passwordGrantOpaque() async throws {
        let dot = try await DjangoOAuthToolkit.start(accessTokenLifetime: 120)
        defer { dot.stop() }
        let tokens = try await dot.passwordGrant()
        #expect(!tokens.accessToken.isEmpty && !tokens.refreshToken.isEmpty)
        #expect(tokens.accessToken.split(separator: ".").count == 1)
        #expect(tokens.refreshToken.split(separator: ".").count == 1)
        #expect(tokens.idToken == nil)
    }

    @Test("with --jwt-access-tokens the password grant gives an opaque refresh token and an RS256 JWT access token")
    func passwordGrant() async throws {
        let dot = try await DjangoOAuthToolkit.start(accessTokenLifetime: 120, jwtAccessTokens: true)
        defer { dot.stop() }
        let tokens = try await dot.passwordGrant()
        #expect(!tokens.refreshToken.isEmpty)
        #expect(tokens.refreshToken.split(separator: ".").count == 1)
        // DOT's password grant returns no id_token, even with scope openid.
        #expect(tokens.idToken == nil)

        let header = try jwtPart(tokens.accessToken, 0)
        #expect(header["alg"] as? String == "RS256")
        #expect(header["kid"] as? String != nil)
        let claims = try jwtPart(tokens.accessToken, 1)
        #expect(claims["iss"] as? String == dot.issuer.absoluteString)
        #expect(claims["aud"] as? String == dot.passwordClientId)
        #expect(claims["preferred_username"] as? String == dot.username)
        #expect((claims["sub"] as? String)?.isEmpty == false)
        #expect(claims["jti"] as? String != nil)
        #expect(claims["scope"] as? String == "openid offline_access")
        let issuedAt = try #require(claims["iat"] as? Int)
        let expiry = try #require(claims["exp"] as? Int)
        #expect(expiry - issuedAt == 120)

        let jwks = try await getJSON(dot.issuer.appendingPathComponent(".well-known/jwks.json"))
        let kids = (jwks["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
        #expect(kids == [header["kid"] as? String])
    }

    @Test("a refresh rotates the refresh token and its id_token has the access token's sub")
    func refreshRotates() async throws {
        let dot = try await DjangoOAuthToolkit.start(jwtAccessTokens: true)
        defer { dot.stop() }
        let first = try await dot.passwordGrant()

        let refreshed = try await refresh(first.refreshToken, at: dot)
        #expect(refreshed.status == 200)
        let newRefreshToken = try #require(refreshed.json["refresh_token"] as? String)
        #expect(newRefreshToken != first.refreshToken)
        #expect(refreshed.json["expires_in"] as? Int == 300)
        let accessToken = try #require(refreshed.json["access_token"] as? String)
        let idToken = try #require(refreshed.json["id_token"] as? String)
        let sub = try jwtPart(accessToken, 1)["sub"] as? String
        #expect(sub != nil)
        #expect(try jwtPart(idToken, 1)["sub"] as? String == sub)
        #expect(try jwtPart(first.accessToken, 1)["sub"] as? String == sub)

        let again = try await refresh(newRefreshToken, at: dot)
        #expect(again.status == 200)
    }

    @Test("reusing a rotated refresh token is invalid_grant and kills the new one too")
    func reuseRevokesFamily() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        defer { dot.stop() }
        let first = try await dot.passwordGrant()
        let rotated = try await refresh(first.refreshToken, at: dot)
        let newRefreshToken = try #require(rotated.json["refresh_token"] as? String)

        let reused = try await refresh(first.refreshToken, at: dot)
        #expect(reused.status == 400)
        #expect(reused.json["error"] as? String == "invalid_grant")

        let afterReuse = try await refresh(newRefreshToken, at: dot)
        #expect(afterReuse.status == 400)
        #expect(afterReuse.json["error"] as? String == "invalid_grant")
    }

    @Test("a refresh token revoked at the revocation endpoint is invalid_grant")
    func revocation() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        defer { dot.stop() }
        let tokens = try await dot.passwordGrant()
        let endpoint = dot.issuer.appendingPathComponent("revoke_token/")

        let revoked = try await postForm(
            endpoint,
            ["token": tokens.refreshToken, "token_type_hint": "refresh_token", "client_id": dot.passwordClientId]
        )
        #expect(revoked.status == 200)
        let refreshed = try await refresh(tokens.refreshToken, at: dot)
        #expect(refreshed.status == 400)
        #expect(refreshed.json["error"] as? String == "invalid_grant")

        // RFC 7009 section 2.2: an unknown token is answered 200 as well.
        let unknown = try await postForm(endpoint, ["token": "not-a-token", "client_id": dot.passwordClientId])
        #expect(unknown.status == 200)
    }

    @Test("the code flow with PKCE S256 through the login form yields a code; a wrong verifier is invalid_grant")
    func codeFlow() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        defer { dot.stop() }
        // RFC 7636 appendix B: the S256 challenge of this verifier, computed independently.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        let state = randomBase64URL(16)
        let nonce = randomBase64URL(16)
        // Any port: DOT matches loopback redirect URIs regardless of port (RFC 8252 section 7.3).
        let redirectURI = "http://127.0.0.1:\(Int.random(in: 20_000...60_000))/callback"
        var components = URLComponents(
            url: dot.issuer.appendingPathComponent("authorize/"),
            resolvingAgainstBaseURL: false
        )!
        components.percentEncodedQuery = formEncode([
            "response_type": "code", "client_id": dot.codeClientId, "redirect_uri": redirectURI,
            "scope": "openid offline_access", "state": state, "nonce": nonce,
            "code_challenge": challenge, "code_challenge_method": "S256",
        ])

        let redirect = try await dot.driveLogin(authorizationURL: components.url!)
        #expect(redirect.absoluteString.hasPrefix(redirectURI + "?"))
        let query = Dictionary(
            (URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                ($0.name, $0.value ?? "")
            },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(query["state"] == state)
        #expect(query["iss"] == dot.issuer.absoluteString)
        let code = try #require(query["code"])

        var exchange = [
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI,
            "client_id": dot.codeClientId, "code_verifier": randomBase64URL(32),
        ]
        let wrong = try await postForm(dot.issuer.appendingPathComponent("token/"), exchange)
        #expect(wrong.status == 400)
        #expect(try json(wrong.body)["error"] as? String == "invalid_grant")

        exchange["code_verifier"] = verifier
        let right = try await postForm(dot.issuer.appendingPathComponent("token/"), exchange)
        #expect(right.status == 200)
        let tokens = try json(right.body)
        #expect(tokens["refresh_token"] as? String != nil)
        let accessToken = try #require(tokens["access_token"] as? String)
        let idToken = try #require(tokens["id_token"] as? String)
        let idClaims = try jwtPart(idToken, 1)
        #expect(idClaims["nonce"] as? String == nonce)
        #expect(idClaims["aud"] as? String == dot.codeClientId)
        #expect((idClaims["sub"] as? String)?.isEmpty == false)
        // DOT's default: the access token is opaque, for the resource server only.
        #expect(accessToken.split(separator: ".").count == 1)

        let replayed = try await postForm(dot.issuer.appendingPathComponent("token/"), exchange)
        #expect(replayed.status == 400)
    }

    @Test("driveLogin throws with DOT's reason when the redirect URI is not registered")
    func unregisteredRedirect() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        defer { dot.stop() }
        var components = URLComponents(
            url: dot.issuer.appendingPathComponent("authorize/"),
            resolvingAgainstBaseURL: false
        )!
        // Only the IP literal 127.0.0.1 gets the any-port loopback rule; "localhost" must match exactly.
        components.percentEncodedQuery = formEncode([
            "response_type": "code", "client_id": dot.codeClientId,
            "redirect_uri": "http://localhost:\(Int.random(in: 20_000...60_000))/callback",
            "scope": "openid", "state": "s", "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
        ])
        let error = await #expect(throws: DjangoOAuthToolkitError.self) {
            _ = try await dot.driveLogin(authorizationURL: components.url!)
        }
        #expect(error?.description.contains("Mismatching redirect URI") == true)
    }

    @Test("stop ends nginx and the server: neither port answers")
    func stopEndsServer() async throws {
        let dot = try await DjangoOAuthToolkit.start()
        dot.stop()
        await #expect(throws: (any Error).self) {
            _ = try await getJSON(dot.issuer.appendingPathComponent(".well-known/openid-configuration"))
        }
        await #expect(throws: (any Error).self) {
            _ = try await getJSON(dot.backendURL.appendingPathComponent("o/.well-known/openid-configuration"))
        }
    }
}

private func randomBase64URL(_ count: Int) -> String {
    Data((0..<count).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private func refresh(
    _ refreshToken: String,
    at dot: DjangoOAuthToolkit
) async throws -> (
    status: Int, json: [String: Any]
) {
    let (status, body) = try await postForm(
        dot.issuer.appendingPathComponent("token/"),
        ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": dot.passwordClientId]
    )
    return (status, try json(body))
}

private func getJSON(_ url: URL) async throws -> [String: Any] {
    let response = try await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60))
    try #require(response.status == 200)
    return try json(response.body)
}

private func json(_ body: Data) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
}

/// Decodes part `index` (0 header, 1 claims) of a compact JWS after checking its three
/// segments are strict base64url.
private func jwtPart(_ token: String, _ index: Int) throws -> [String: Any] {
    let segments = token.split(separator: ".", omittingEmptySubsequences: false)
    try #require(segments.count == 3)
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    try #require(segments.allSatisfy { !$0.isEmpty && $0.allSatisfy(alphabet.contains) })
    var base64 = segments[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return try json(try #require(Data(base64Encoded: base64)))
}
