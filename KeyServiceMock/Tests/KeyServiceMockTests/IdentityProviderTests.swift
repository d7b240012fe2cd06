import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("Identity provider: discovery and keys")
struct DiscoveryTests {
    let http = HTTPClient()

    @Test("discovery names the issuer and every endpoint, including revocation and end_session")
    func discovery() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let answer = try await http.get(server.issuer.appendingPathComponent(".well-known/openid-configuration"))
            #expect(answer.status == 200)
            let document = answer.json
            let issuer = server.issuer.absoluteString
            #expect(document.string("issuer") == issuer)
            #expect(issuer == server.baseURL.absoluteString + "/auth/realms/demo")
            let endpoints = issuer + "/protocol/openid-connect"
            #expect(document.string("authorization_endpoint") == endpoints + "/auth")
            #expect(document.string("token_endpoint") == endpoints + "/token")
            #expect(document.string("jwks_uri") == endpoints + "/certs")
            #expect(document.string("revocation_endpoint") == endpoints + "/revoke")
            #expect(document.string("end_session_endpoint") == endpoints + "/logout")
            #expect(document.strings("code_challenge_methods_supported") == ["S256"])
            #expect(document.strings("response_types_supported") == ["code"])
            #expect(document.strings("id_token_signing_alg_values_supported") == ["EdDSA"])
            #expect(
                Set(document.strings("grant_types_supported") ?? [])
                    == [
                        "authorization_code", "refresh_token", "password",
                        "urn:ietf:params:oauth:grant-type:token-exchange",
                    ]
            )
        }
    }

    @Test("every token is an EdDSA JWT that verifies under the JWKS key named by its kid")
    func tokensVerifyUnderJWKS() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let keys = try await http.get(client.url("certs")).json.objects("keys")
            try #require(keys.count == 1)
            let jwk = keys[0]
            #expect(jwk.string("kty") == "OKP")
            #expect(jwk.string("crv") == "Ed25519")
            #expect(jwk.string("alg") == "EdDSA")
            let publicKey = try Base64URL.decode(try #require(jwk.string("x")))
            let tokens = try await client.tokens()
            for name in ["access_token", "id_token", "refresh_token"] {
                let token = try #require(tokens.string(name), "\(name)")
                let header = try header(of: token)
                #expect(header.string("alg") == "EdDSA")
                #expect(header.string("kid") == jwk.string("kid"))
                let parts = token.split(separator: ".")
                let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
                #expect(
                    Ed25519.isValidSignature(try Base64URL.decode(parts[2]), for: signingInput, publicKey: publicKey)
                )
            }
        }
    }
}

@Suite("Identity provider: authorization code flow with PKCE")
struct AuthorizationCodeTests {
    let http = HTTPClient()

    @Test("the authorization endpoint auto-approves users[0] and redirects with code, state and iss")
    func redirectsWithCode() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let answer = try await client.authorize(["state": "a b+c/d"])
            #expect(answer.status == 302)
            let location = try #require(answer.header("Location"))
            #expect(location.hasPrefix("http://127.0.0.1:49152/callback?"))
            let fields = try OIDCClient.redirectFields(answer)
            #expect(fields["code"] != nil)
            #expect(fields["state"] == "a b+c/d")
            #expect(fields["iss"] == server.issuer.absoluteString)
        }
    }

    @Test("a registered loopback redirect URI matches on any port, and nothing else does")
    func loopbackRedirects() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            for accepted in [
                "http://127.0.0.1/callback", "http://127.0.0.1:1/callback", "http://127.0.0.1:65000/callback",
            ] {
                #expect(try await client.authorize(["redirect_uri": accepted]).status == 302, "\(accepted)")
            }
            for refused in [
                "http://127.0.0.1:8080/other", "http://evil.example/callback", "https://127.0.0.1/callback",
                "http://127.0.0.2/callback", "http://127.0.0.1/callback?x=1",
            ] {
                let answer = try await client.authorize(["redirect_uri": refused])
                #expect(answer.status == 400, "\(refused)")
                #expect(answer.header("Location") == nil)
            }
        }
    }

    @Test("an unknown client or a missing redirect URI answers 400 without redirecting")
    func badClientIsNotRedirected() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            for overrides: [String: String?] in [["client_id": "stranger"], ["client_id": nil], ["redirect_uri": nil]] {
                let answer = try await client.authorize(overrides)
                #expect(answer.status == 400)
                #expect(answer.header("Location") == nil)
            }
        }
    }

    @Test("PKCE is required: no challenge, or a method other than S256, is an error on the redirect")
    func pkceRequired() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            for overrides: [String: String?] in [
                ["code_challenge": nil], ["code_challenge_method": nil], ["code_challenge_method": "plain"],
                ["response_type": "token"],
            ] {
                let answer = try await client.authorize(overrides)
                #expect(answer.status == 302)
                let fields = try OIDCClient.redirectFields(answer)
                #expect(fields["code"] == nil)
                #expect(fields["error"] != nil)
                #expect(fields["state"] == "st-1")
            }
        }
    }

    @Test("the code with the right verifier gives access, refresh and id tokens; the id token carries the nonce")
    func exchange() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let (code, verifier) = try await client.code(nonce: "nonce-42")
            let answer = try await client.exchange(code: code, verifier: verifier)
            #expect(answer.status == 200)
            let tokens = answer.json
            #expect(tokens.string("token_type") == "Bearer")
            #expect(tokens.int("expires_in") == 300)
            #expect(tokens.string("scope") == "openid")
            let idToken = try claims(of: try #require(tokens.string("id_token")))
            #expect(idToken.string("nonce") == "nonce-42")
            #expect(idToken.string("sub") == "demo-user")
            #expect(idToken.string("aud") == "vault")
        }
    }

    @Test("a wrong PKCE verifier is invalid_grant, and the code is spent")
    func wrongVerifier() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let (code, verifier) = try await client.code()
            let wrong = try await client.exchange(code: code, verifier: OIDCClient.pkce().verifier)
            #expect(wrong.status == 400)
            #expect(wrong.string("error") == "invalid_grant")
            #expect(try await client.exchange(code: code, verifier: verifier).string("error") == "invalid_grant")
        }
    }

    @Test("a missing verifier, another redirect URI or another client is invalid_grant")
    func exchangeMismatches() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let first = try await client.code()
            #expect(try await client.exchange(code: first.code, verifier: nil).string("error") == "invalid_grant")
            let second = try await client.code()
            let otherRedirect = try await client.exchange(
                code: second.code,
                verifier: second.verifier,
                redirectURI: "http://127.0.0.1:1/callback"
            )
            #expect(otherRedirect.string("error") == "invalid_grant")
        }
    }

    @Test("a code works once; using it again is invalid_grant and revokes the tokens it gave")
    func codeReuse() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let (code, verifier) = try await client.code()
            let first = try await client.exchange(code: code, verifier: verifier)
            #expect(first.status == 200)
            let again = try await client.exchange(code: code, verifier: verifier)
            #expect(again.string("error") == "invalid_grant")
            let refresh = try await client.refresh(try #require(first.string("refresh_token")))
            #expect(refresh.string("error") == "invalid_grant")
        }
    }

    @Test("an authorization code expires after a minute on the injected clock")
    func codeExpires() async throws {
        let clock = ManualClock()
        var configuration = KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let (code, verifier) = try await client.code()
            clock.advance(by: 61)
            #expect(try await client.exchange(code: code, verifier: verifier).string("error") == "invalid_grant")
        }
    }
}

@Suite("Identity provider: token endpoint")
struct TokenEndpointTests {
    let http = HTTPClient()

    @Test("tokens carry iss, sub, aud, exp, iat, jti, scope and login_provider, with the configured lifetimes")
    func claimsAndLifetimes() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.accessTokenLifetime = 120
        configuration.idTokenLifetime = 60
        configuration.refreshTokenLifetime = 3_600
        configuration.users = [MockUser(username: "ann", password: "pw", subject: "sub-ann", loginProvider: "nemid")]
        // An injected clock, so `iat` is checked exactly rather than against the wall clock.
        let issued: TimeInterval = 1_800_000_000
        configuration.now = { Date(timeIntervalSince1970: issued) }
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let answer = try await client.passwordLogin(username: "ann", password: "pw")
            #expect(answer.status == 200)
            let tokens = answer.json
            #expect(tokens.int("expires_in") == 120)
            let expected: [(String, String, Int)] = [
                ("access_token", "Bearer", 120), ("id_token", "ID", 60), ("refresh_token", "Refresh", 3_600),
            ]
            for (name, type, lifetime) in expected {
                let token = try claims(of: try #require(tokens.string(name)))
                #expect(token.string("typ") == type)
                #expect(token.string("iss") == server.issuer.absoluteString)
                #expect(token.string("sub") == "sub-ann")
                #expect(token.string("aud") == "vault")
                #expect(token.string("scope") == "openid")
                #expect(token.string("login_provider") == "nemid")
                #expect(token.string("jti")?.isEmpty == false)
                let issuedAt = try #require(token.int("iat"))
                #expect(try #require(token.int("exp")) - issuedAt == lifetime)
                #expect(issuedAt == Int(issued))
            }
            let refresh = try claims(of: try #require(tokens.string("refresh_token")))
            #expect(refresh.string("family_id") == refresh.string("sid"))
        }
    }

    @Test("no id token without the openid scope")
    func noOpenIDScope() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let answer = try await http.post(
                client.url("token"),
                form: [
                    "grant_type": "password", "username": "demo", "password": "demo-password", "client_id": "vault",
                    "scope": "profile",
                ]
            )
            #expect(answer.status == 200)
            #expect(answer.json.has("id_token") == false)
            #expect(answer.string("access_token") != nil)
        }
    }

    @Test("errors: wrong password, unknown grant type, unknown client, missing parameters")
    func errors() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let wrongPassword = try await client.passwordLogin(password: "nope")
            #expect(wrongPassword.status == 400)
            #expect(wrongPassword.string("error") == "invalid_grant")
            #expect(wrongPassword.string("error_description") != nil)
            let url = client.url("token")
            let unsupported = try await http.post(
                url,
                form: ["grant_type": "client_credentials", "client_id": "vault"]
            )
            #expect(unsupported.status == 400)
            #expect(unsupported.string("error") == "unsupported_grant_type")
            let stranger = try await http.post(url, form: ["grant_type": "password", "client_id": "stranger"])
            #expect(stranger.status == 400)
            #expect(stranger.string("error") == "invalid_client")
            let missing = try await http.post(url, form: ["client_id": "vault"])
            #expect(missing.status == 400)
            #expect(missing.string("error") == "invalid_request")
            let garbage = try await client.refresh("not-a-token")
            #expect(garbage.string("error") == "invalid_grant")
        }
    }
}

@Suite("Identity provider: refresh-token rotation and reuse detection")
struct RefreshRotationTests {
    let http = HTTPClient()

    @Test("every refresh answers a new refresh token, and the new one works")
    func rotates() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            var refreshToken = try #require(try await client.tokens().string("refresh_token"))
            for _ in 0..<3 {
                let answer = try await client.refresh(refreshToken)
                #expect(answer.status == 200)
                let next = try #require(answer.string("refresh_token"))
                #expect(next != refreshToken)
                #expect(answer.string("access_token") != nil)
                refreshToken = next
            }
        }
    }

    @Test("id tokens carry the acr and amr a test sets, from the next token on; the last one issued is told")
    func authenticationContext() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let first = try await client.tokens()
            let plain = try claims(of: try #require(first.string("id_token")))
            #expect(plain.string("acr") == nil && plain.strings("amr") == nil && plain.int("auth_time") != nil)
            server.authentication.set(acr: "gold", amr: ["pwd", "otp"])
            let answer = try await client.refresh(try #require(first.string("refresh_token")))
            let idToken = try #require(answer.string("id_token"))
            #expect(server.authentication.lastIDToken == idToken)
            let renewed = try claims(of: idToken)
            #expect(renewed.string("acr") == "gold" && renewed.strings("amr") == ["pwd", "otp"])
            #expect(renewed.int("auth_time") == plain.int("auth_time"), "auth_time stays the login's")
        }
    }

    @Test("presenting a rotated refresh token is invalid_grant and revokes the whole family")
    func reuseRevokesFamily() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let first = try #require(try await client.tokens().string("refresh_token"))
            let second = try #require(try await client.refresh(first).string("refresh_token"))
            let reuse = try await client.refresh(first)
            #expect(reuse.status == 400)
            #expect(reuse.string("error") == "invalid_grant")
            // The newest token of the family is dead too: the thief and the client are both cut off.
            #expect(try await client.refresh(second).string("error") == "invalid_grant")
        }
    }

    @Test("two logins are two families: reuse in one leaves the other working")
    func familiesAreSeparate() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let mine = try #require(try await client.tokens().string("refresh_token"))
            let other = try #require(try await client.tokens().string("refresh_token"))
            _ = try await client.refresh(mine)
            _ = try await client.refresh(mine)
            #expect(try await client.refresh(other).status == 200)
        }
    }

    @Test("of concurrent refreshes with one token exactly one succeeds")
    func concurrentRefresh() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let token = try #require(try await client.tokens().string("refresh_token"))
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<10 { group.addTask { await status { try await client.refresh(token) } } }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 9)
        }
    }

    @Test("an expired refresh token is invalid_grant (injected clock)")
    func expired() async throws {
        let clock = ManualClock()
        var configuration = KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        configuration.refreshTokenLifetime = 600
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let token = try #require(try await client.tokens().string("refresh_token"))
            clock.advance(by: 599)
            let fresh = try #require(try await client.refresh(token).string("refresh_token"))
            clock.advance(by: 601)
            let answer = try await client.refresh(fresh)
            #expect(answer.status == 400)
            #expect(answer.string("error") == "invalid_grant")
        }
    }

    @Test("a refresh token from another client is invalid_grant")
    func otherClient() async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.clients.append(MockClient(clientId: "other", redirectURIs: ["http://127.0.0.1/cb"]))
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let token = try #require(try await client.tokens().string("refresh_token"))
            var other = client
            other.clientId = "other"
            #expect(try await other.refresh(token).string("error") == "invalid_grant")
        }
    }
}

@Suite("Identity provider: revocation, logout and userinfo")
struct RevocationTests {
    let http = HTTPClient()

    @Test("revoking a refresh token makes it, and its family, useless")
    func revokeRefreshToken() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let first = try #require(try await client.tokens().string("refresh_token"))
            let second = try #require(try await client.refresh(first).string("refresh_token"))
            #expect(try await client.revoke(second, hint: "refresh_token").status == 200)
            #expect(try await client.refresh(second).string("error") == "invalid_grant")
        }
    }

    @Test("revoking an unknown or malformed token answers 200; a request without token answers 400")
    func revokeUnknown() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            #expect(try await client.revoke("garbage").status == 200)
            #expect(try await client.revoke("a.b.c", hint: "access_token").status == 200)
            let noToken = try await http.post(client.url("revoke"), form: ["client_id": "vault"])
            #expect(noToken.status == 400)
        }
    }

    @Test("revoking an access token makes userinfo refuse it; a live one is accepted")
    func revokeAccessToken() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let access = try #require(try await client.tokens().string("access_token"))
            let info = try await client.userinfo(access)
            #expect(info.status == 200)
            #expect(info.string("sub") == "demo-user")
            #expect(try await client.revoke(access).status == 200)
            #expect(try await client.userinfo(access).status == 401)
        }
    }

    @Test("an access token expires on the injected clock")
    func accessTokenExpires() async throws {
        let clock = ManualClock()
        var configuration = KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let access = try #require(try await client.tokens().string("access_token"))
            clock.advance(by: 299)
            #expect(try await client.userinfo(access).status == 200)
            clock.advance(by: 2)
            #expect(try await client.userinfo(access).status == 401)
        }
    }

    @Test("end_session with an id token hint ends the session and redirects with state")
    func logoutRedirects() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let tokens = try await client.tokens()
            let idToken = try #require(tokens.string("id_token"))
            var components = URLComponents(url: client.url("logout"), resolvingAgainstBaseURL: false)!
            components.percentEncodedQuery = formEncoded([
                "id_token_hint": idToken, "post_logout_redirect_uri": "http://127.0.0.1:5000/callback", "state": "bye",
            ])
            let answer = try await http.get(components.url!)
            #expect(answer.status == 302)
            #expect(answer.header("Location") == "http://127.0.0.1:5000/callback?state=bye")
            let refresh = try await client.refresh(try #require(tokens.string("refresh_token")))
            #expect(refresh.string("error") == "invalid_grant")
            #expect(try await client.userinfo(try #require(tokens.string("access_token"))).status == 401)
        }
    }

    @Test("end_session by POST with a refresh token answers 200; an unregistered redirect answers 400")
    func logoutPost() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = OIDCClient(server: server, http: http)
            let tokens = try await client.tokens()
            let refreshToken = try #require(tokens.string("refresh_token"))
            let refused = try await http.post(
                client.url("logout"),
                form: [
                    "refresh_token": refreshToken, "client_id": "vault",
                    "post_logout_redirect_uri": "http://evil.example/",
                ]
            )
            #expect(refused.status == 400)
            #expect(try await client.refresh(refreshToken).status == 200)
            let fresh = try await client.tokens()
            let answer = try await http.post(
                client.url("logout"),
                form: ["refresh_token": try #require(fresh.string("refresh_token")), "client_id": "vault"]
            )
            #expect(answer.status == 200)
            #expect(try await client.refresh(try #require(fresh.string("refresh_token"))).status == 400)
        }
    }
}
