import CredentialVault
import Foundation
import JWTKit
import KeyServiceMock
import Testing
import VaultCrypto

/// DPoP (RFC 9449) against KeyServiceMock, which checks every proof by the RFC with jwt-kit, over real HTTP.
@Suite("DPoP: tokens bound to a key sealed beside the refresh token")
struct DPoPTests {
    private static func userinfo(_ fixture: AuthFixture) -> URL {
        fixture.server.issuer.appending(path: "protocol/openid-connect/userinfo")
    }

    private static func tokenEndpoint(_ fixture: AuthFixture) -> URL {
        fixture.server.issuer.appending(path: "protocol/openid-connect/token")
    }

    /// The JSON of a JWT's segment `index` (0: header, 1: claims).
    private static func segment(_ jwt: String, _ index: Int) throws -> [String: Any] {
        let part = jwt.split(separator: ".", omittingEmptySubsequences: false)[index]
        return try #require(try JSONSerialization.jsonObject(with: Base64URL.decode(part)) as? [String: Any])
    }

    @Test("a proof has typ dpop+jwt, ES256, the public jwk, htm, htu without query or fragment, iat, a fresh jti, ath")
    func proofShape() async throws {
        let key = DPoPKey()
        let proofs = DPoPProofs(key: key, nonces: DPoPNonces(), now: { Date(timeIntervalSince1970: 1_700_000_000) })
        let url = try #require(URL(string: "https://rs.example:8443/api/Patient?_count=5#top"))
        let proof = proofs.proof(method: "get", url: url, accessToken: "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")
        let header = try Self.segment(proof, 0)
        let claims = try Self.segment(proof, 1)
        #expect(header["typ"] as? String == "dpop+jwt")
        #expect(header["alg"] as? String == "ES256")
        let jwk = try #require(header["jwk"] as? [String: String])
        #expect(jwk["kty"] == "EC" && jwk["crv"] == "P-256" && jwk["d"] == nil)
        #expect(claims["htm"] as? String == "GET")
        #expect(claims["htu"] as? String == "https://rs.example:8443/api/Patient")
        #expect(claims["iat"] as? Int == 1_700_000_000)
        // RFC 9449 section 7.1's example access token and its ath.
        #expect(claims["ath"] as? String == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        #expect(claims["nonce"] == nil)
        let other = try Self.segment(proofs.proof(method: "GET", url: url), 1)
        #expect(other["jti"] as? String != claims["jti"] as? String)
        #expect(other["ath"] == nil)
        // The signature verifies with the jwk in the header (jwt-kit).
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(parameters: (x: try #require(jwk["x"]), y: try #require(jwk["y"]))))
        struct Claims: JWTPayload {
            let htm: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        #expect(try await keys.verify(proof, as: Claims.self).htm == "GET")
        #expect(!"\(key)".contains(key.publicJWK["x"]!) && "\(key)".contains(key.thumbprint))
    }

    @Test("login and refresh with DPoP: DPoP tokens, the key sealed with the refresh token, refreshed after a restart")
    func loginAndRefresh() async throws {
        try await AuthFixture.with(dpop: DPoPMode()) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let key = try #require(await auth.refreshToken?.dpopKey)
            let first = try await auth.getAccessToken()
            #expect(first.tokenType == "DPoP")
            let refreshed = try await auth.getAccessToken(forceRefresh: true)
            #expect(refreshed.isDPoPBound && refreshed.token != first.token)
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") == 1)
            // Another process: the password opens the envelope, whose record holds the key; the refresh needs it.
            let restarted = try fixture.restarted()
            let token = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(token.isDPoPBound)
            #expect(await restarted.auth.refreshToken?.dpopKey == key)
            let answer = try await restarted.auth.sendAuthorized(
                HTTPRequest(method: "GET", url: Self.userinfo(fixture), timeout: 60)
            )
            #expect(answer.status == 200)
        }
    }

    @Test("a server nonce: the token request is sent once more, exactly once, and the nonce is used next time")
    func nonceRetry() async throws {
        try await AuthFixture.with(dpop: DPoPMode(requiresNonce: true)) { fixture in
            try await fixture.register()
            #expect(fixture.server.tokenRequests(grantType: "authorization_code") == 2)
            _ = try await fixture.vault.auth.getAccessToken(forceRefresh: true)
            #expect(fixture.server.tokenRequests(grantType: "refresh_token") == 1)
            let answer = try await fixture.vault.auth.sendAuthorized(
                HTTPRequest(method: "GET", url: Self.userinfo(fixture), timeout: 60)
            )
            #expect(answer.status == 200)
            // The resource has a nonce of its own: one refusal, one retry with it, and the next request uses it.
            #expect(fixture.transport.count(endingWith: "/userinfo") == 2)
            #expect(
                try await fixture.vault.auth.sendAuthorized(
                    HTTPRequest(method: "GET", url: Self.userinfo(fixture), timeout: 60)
                )
                .status == 200
            )
            #expect(fixture.transport.count(endingWith: "/userinfo") == 3)
        }
    }

    @Test("no retry on any other refusal: a token endpoint's bare 400 is sent once")
    func noRetryOnOtherErrors() async throws {
        try await AuthFixture.with(dpop: DPoPMode(requiresNonce: true)) { fixture in
            try await fixture.register()
            let before = fixture.transport.count(endingWith: "/token")
            fixture.server.faults.set(.bareStatus(400), for: .tokenEndpoint)
            await #expect(throws: VaultError.self) { try await fixture.vault.auth.getAccessToken(forceRefresh: true) }
            #expect(fixture.transport.count(endingWith: "/token") == before + 1)
        }
    }

    @Test("a resource server's use_dpop_nonce carries the nonce in DPoP-Nonce and WWW-Authenticate")
    func resourceNonce() async throws {
        try await AuthFixture.with(dpop: DPoPMode(requiresNonce: true)) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let key = try #require(await auth.refreshToken?.dpopKey)
            let token = try await auth.getAccessToken().token
            let fresh = DPoPProofs(key: key, nonces: DPoPNonces(), now: fixture.configuration.now)
            let url = Self.userinfo(fixture)
            let refused = try await fixture.transport.send(
                HTTPRequest(
                    method: "GET",
                    url: url,
                    headers: [
                        "Authorization": "DPoP \(token)",
                        "DPoP": fresh.proof(method: "GET", url: url, accessToken: token),
                    ],
                    timeout: 60
                )
            )
            #expect(refused.status == 401)
            #expect(refused.headers["www-authenticate"]?.contains(#"error="use_dpop_nonce""#) == true)
            let nonce = try #require(DPoPProofs.nonceRequested(by: refused))
            fresh.nonces.remember(nonce, for: url)
            let accepted = try await fixture.transport.send(
                HTTPRequest(
                    method: "GET",
                    url: url,
                    headers: [
                        "Authorization": "DPoP \(token)",
                        "DPoP": fresh.proof(method: "GET", url: url, accessToken: token),
                    ],
                    timeout: 60
                )
            )
            #expect(accepted.status == 200)
        }
    }

    @Test("the server refuses a replayed jti, a wrong ath, a wrong htu, and the bound token sent as a bearer token")
    func refusedProofs() async throws {
        try await AuthFixture.with(dpop: DPoPMode()) { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            let key = try #require(await auth.refreshToken?.dpopKey)
            let token = try await auth.getAccessToken().token
            let proofs = DPoPProofs(key: key, nonces: DPoPNonces(), now: fixture.configuration.now)
            let url = Self.userinfo(fixture)
            func send(_ proof: String, scheme: String = "DPoP") async throws -> HTTPResponse {
                try await fixture.transport.send(
                    HTTPRequest(
                        method: "GET",
                        url: url,
                        headers: ["Authorization": "\(scheme) \(token)", "DPoP": proof],
                        timeout: 60
                    )
                )
            }
            let proof = proofs.proof(method: "GET", url: url, accessToken: token)
            #expect(try await send(proof).status == 200)
            let replayed = try await send(proof)
            #expect(replayed.status == 401 && String(decoding: replayed.body, as: UTF8.self).contains("jti"))
            let wrongHash = try await send(proofs.proof(method: "GET", url: url, accessToken: token + "x"))
            #expect(wrongHash.status == 401 && String(decoding: wrongHash.body, as: UTF8.self).contains("ath"))
            let elsewhere = url.deletingLastPathComponent().appending(path: "other")
            let wrongTarget = try await send(proofs.proof(method: "GET", url: elsewhere, accessToken: token))
            #expect(wrongTarget.status == 401 && String(decoding: wrongTarget.body, as: UTF8.self).contains("htu"))
            let wrongMethod = try await send(proofs.proof(method: "POST", url: url, accessToken: token))
            #expect(wrongMethod.status == 401)
            let otherKey = DPoPProofs(key: DPoPKey(), nonces: DPoPNonces(), now: fixture.configuration.now)
            #expect(try await send(otherKey.proof(method: "GET", url: url, accessToken: token)).status == 401)
            let asBearer = try await send(proofs.proof(method: "GET", url: url, accessToken: token), scheme: "Bearer")
            #expect(asBearer.status == 401)
        }
    }

    @Test("a refresh token copied out without its key is refused, with no proof and with another key's proof")
    func copiedRefreshToken() async throws {
        try await AuthFixture.with(dpop: DPoPMode()) { fixture in
            try await fixture.register()
            let stolen = try #require(await fixture.vault.auth.refreshToken?.token)
            let bare = try await fixture.redeemDirectly(stolen)
            #expect(bare.status == 400 && bare.body.contains("invalid_grant"))
            let url = Self.tokenEndpoint(fixture)
            let thief = DPoPProofs(key: DPoPKey(), nonces: DPoPNonces(), now: fixture.configuration.now)
            let proved = try await Browser.postForm(
                url,
                ["grant_type": "refresh_token", "client_id": "vault", "refresh_token": stolen],
                headers: ["DPoP": thief.proof(method: "POST", url: url)]
            )
            #expect(proved.status == 400 && String(decoding: proved.body, as: UTF8.self).contains("invalid_grant"))
            // The login itself still refreshes: the refusals used nothing up.
            #expect(try await fixture.vault.auth.getAccessToken(forceRefresh: true).isDPoPBound)
        }
    }

    @Test("an issuer without DPoP: bearer tokens, no key made or sealed, no proof to give")
    func issuerWithoutDPoP() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let auth = fixture.vault.auth
            #expect(await auth.refreshToken?.dpopKey == nil)
            #expect(try await auth.getAccessToken().tokenType == "Bearer")
            let request = try await auth.authorizing(HTTPRequest(method: "GET", url: Self.userinfo(fixture)))
            #expect(request.headers["Authorization"]?.hasPrefix("Bearer ") == true && request.headers["DPoP"] == nil)
            await #expect(throws: VaultError.self) {
                try await auth.dpopProof(method: "GET", url: Self.userinfo(fixture))
            }
        }
    }
}
