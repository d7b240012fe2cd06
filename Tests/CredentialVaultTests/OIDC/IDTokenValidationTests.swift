import CredentialVault
import Foundation
import JWTKit
import Synchronization
import Testing

/// OpenID Connect Core 1.0 section 3.1.3.7 over real HTTP: a test issuer's token endpoint answers hostile
/// id_tokens, and each is refused with a clear error and nothing kept. The first test is the control: the
/// same issuer with a valid id_token logs the user in.
@Suite("id_token validation against a test token endpoint")
struct IDTokenValidationTests {
    /// Runs the OpenID Connect flow of a fresh vault against `issuer`; returns the user id or the error.
    static func login(at issuer: TestIssuer) async throws -> (Result<String, VaultError>, Vault) {
        let root = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: root) }
        let vault = try Vault(
            configuration: VaultConfiguration(
                issuer: issuer.issuer,
                clientId: issuer.clientId,
                // Never called: the flow ends before anything is sealed.
                keyServiceURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
                storeDirectory: root.appending(path: "store")
            )
        )
        do {
            let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                await Browser.follow(url)
            }
            return (.success(userId), vault)
        } catch {
            return (.failure(error), vault)
        }
    }

    /// Expects the login to be refused as an id_token failure whose message contains `reason`, with no session.
    static func expectRefused(
        _ reason: String,
        initialKeys: [[String: String]]? = nil,
        idToken: @escaping TestIssuer.IDTokenMaker,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await TestIssuer.with(initialKeys: initialKeys, idToken: idToken) { issuer in
            let (result, vault) = try await login(at: issuer)
            guard case .failure(let error) = result else {
                Issue.record("a hostile id_token was accepted", sourceLocation: sourceLocation)
                return
            }
            #expect(error.kind == .openIDConnectFailed, sourceLocation: sourceLocation)
            #expect(error.description.contains("id token was refused"), sourceLocation: sourceLocation)
            #expect(error.description.contains(reason), "\(error)", sourceLocation: sourceLocation)
            #expect(await !vault.auth.isLoggedIn, sourceLocation: sourceLocation)
            #expect(await vault.auth.refreshToken == nil, sourceLocation: sourceLocation)
        }
    }

    @Test("a valid ES256 id_token logs in as its sub; the access token is opaque and kept as given")
    func valid() async throws {
        let valid: TestIssuer.IDTokenMaker = { nonce, issuer in try await issuer.sign(issuer.validClaims(nonce: nonce))
        }
        try await TestIssuer.with(idToken: valid) { issuer in
            let (result, vault) = try await Self.login(at: issuer)
            #expect(try result.get() == "hostile-test-user")
            let token = try await vault.auth.getAccessToken()
            #expect(token.token.hasPrefix("opaque-"))
            #expect(token.jwt == nil)
            #expect(token.userId == "hostile-test-user")
            #expect(token.expireDate != nil)
            #expect(!String(describing: token).contains(token.token))
            #expect(issuer.keySetFetches == 1)
        }
    }

    @Test("logout at an issuer without a revocation endpoint says so and what remains, and ends the session")
    func logoutWithoutRevocation() async throws {
        let valid: TestIssuer.IDTokenMaker = { nonce, issuer in try await issuer.sign(issuer.validClaims(nonce: nonce))
        }
        try await TestIssuer.with(idToken: valid) { issuer in
            let (result, vault) = try await Self.login(at: issuer)
            _ = try result.get()
            let error = await #expect(throws: VaultError.self) { try await vault.auth.logout() }
            #expect(error?.kind == .revocationFailed)
            #expect(error?.isNetworkError == false)
            #expect(error?.description.contains("offers no revocation endpoint") == true)
            #expect(error?.description.contains("stays valid at the issuer until it expires") == true)
            #expect(await !vault.auth.isLoggedIn)
        }
    }

    @Test("an id_token for another client (foreign aud) is refused")
    func foreignAudience() async throws {
        try await Self.expectRefused("another client (aud)") { nonce, issuer in
            var claims = issuer.validClaims(nonce: nonce)
            claims["aud"] = .string("someone-else")
            return try await issuer.sign(claims)
        }
    }

    @Test("several audiences with the azp of another client are refused")
    func foreignAuthorizedParty() async throws {
        try await Self.expectRefused("another client (azp)") { nonce, issuer in
            var claims = issuer.validClaims(nonce: nonce)
            claims["aud"] = .array([.string(issuer.clientId), .string("someone-else")])
            claims["azp"] = .string("someone-else")
            return try await issuer.sign(claims)
        }
    }

    @Test("an id_token from another issuer (iss) is refused")
    func wrongIssuer() async throws {
        try await Self.expectRefused("issued by https://evil.example") { nonce, issuer in
            var claims = issuer.validClaims(nonce: nonce)
            claims["iss"] = .string("https://evil.example")
            return try await issuer.sign(claims)
        }
    }

    @Test("an expired id_token is refused (past exp plus the leeway)")
    func expired() async throws {
        try await Self.expectRefused("expired") { nonce, issuer in
            try await issuer.sign(issuer.validClaims(nonce: nonce, now: Date().addingTimeInterval(-3_600)))
        }
    }

    @Test("an id_token issued in the future (iat past the leeway) is refused")
    func issuedInTheFuture() async throws {
        try await Self.expectRefused("issued in the future") { nonce, issuer in
            var claims = issuer.validClaims(nonce: nonce)
            claims["iat"] = .number(Date().addingTimeInterval(3_600).timeIntervalSince1970.rounded())
            return try await issuer.sign(claims)
        }
    }

    @Test("an id_token with another login's nonce is refused")
    func wrongNonce() async throws {
        try await Self.expectRefused("nonce") { _, issuer in
            try await issuer.sign(issuer.validClaims(nonce: "another-login"))
        }
    }

    @Test("an HS256 id_token keyed with the issuer's public key material is refused by the algorithm allow-list")
    func hmacConfusion() async throws {
        try await Self.expectRefused("signed with HS256, which this client does not accept") { nonce, issuer in
            let keys = JWTKeyCollection()
            let material = issuer.publicJWK()["x"] ?? "key"
            await keys.add(hmac: HMACKey(from: Data(material.utf8)), digestAlgorithm: .sha256, kid: "key-1")
            return try await keys.sign(TestIssuer.AnyClaims(values: issuer.validClaims(nonce: nonce)), kid: "key-1")
        }
    }

    @Test("an id_token without a nonce, or without an exp, is refused", arguments: ["nonce", "exp"])
    func missingClaim(name: String) async throws {
        try await Self.expectRefused(name == "nonce" ? "nonce" : "no expiry (exp)") { nonce, issuer in
            var claims = issuer.validClaims(nonce: nonce)
            claims[name] = nil
            return try await issuer.sign(claims)
        }
    }

    @Test("an unsecured id_token (alg none) is refused")
    func unsigned() async throws {
        try await Self.expectRefused("unsigned (alg none)") { nonce, issuer in
            try TestIssuer.unsigned(issuer.validClaims(nonce: nonce))
        }
    }

    @Test("an id_token signed by another key under the issuer's kid is refused")
    func badSignature() async throws {
        try await Self.expectRefused("signature does not verify") { nonce, issuer in
            try await issuer.sign(issuer.validClaims(nonce: nonce), with: ES256PrivateKey())
        }
    }

    @Test("an unknown kid fetches the key set once more, then is refused")
    func unknownKeyId() async throws {
        let unknownKid: TestIssuer.IDTokenMaker = { nonce, issuer in
            try await issuer.sign(issuer.validClaims(nonce: nonce), kid: "not-published")
        }
        try await TestIssuer.with(idToken: unknownKid) { issuer in
            let (result, vault) = try await Self.login(at: issuer)
            guard case .failure(let error) = result else {
                Issue.record("an id_token with an unknown kid was accepted")
                return
            }
            #expect(error.description.contains("not in the issuer's key set"), "\(error)")
            #expect(issuer.keySetFetches == 2)
            #expect(await !vault.auth.isLoggedIn)
        }
    }

    @Test("an id_token whose alg does not fit the key its kid names says the algorithm does not match the key")
    func algorithmNotOfTheKey() async throws {
        // The kid is the issuer's (an EC key); the header says RS256. No signature is needed: the key is refused first.
        let rs256: TestIssuer.IDTokenMaker = { nonce, issuer in
            try TestIssuer.compact(
                header: ["alg": "RS256", "typ": "JWT", "kid": .string(issuer.keyId)],
                claims: issuer.validClaims(nonce: nonce),
                signature: "c2lnbmF0dXJl"
            )
        }
        try await TestIssuer.with(idToken: rs256) { issuer in
            let (result, vault) = try await Self.login(at: issuer)
            guard case .failure(let error) = result else {
                Issue.record("an id_token whose alg does not fit its key was accepted")
                return
            }
            #expect(error.kind == .openIDConnectFailed)
            #expect(error.description.contains("algorithm RS256 does not match its signing key (kid)"), "\(error)")
            #expect(error.description.contains("an EC key"), "\(error)")
            #expect(!error.description.contains("not in the issuer's key set"), "\(error)")
            #expect(await !vault.auth.isLoggedIn)
        }
    }

    @Test("a key the issuer published after the set was fetched (rotation) is found by fetching the set once more")
    func rotatedKey() async throws {
        let rotated = ES256PrivateKey()
        let logins = Mutex(0)
        let rotating: TestIssuer.IDTokenMaker = { nonce, issuer in
            guard
                logins.withLock({ count in
                    count += 1
                    return count
                }) > 1
            else { return try await issuer.sign(issuer.validClaims(nonce: nonce)) }
            // The second login: the issuer has rotated to a key the vault's kept set does not have.
            issuer.publish([issuer.publicJWK(), TestIssuer.jwk(of: rotated.publicKey, kid: "key-2", alg: "ES256")])
            return try await issuer.sign(issuer.validClaims(nonce: nonce), kid: "key-2", with: rotated)
        }
        try await TestIssuer.with(idToken: rotating) { issuer in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            let vault = try Vault(
                configuration: VaultConfiguration(
                    issuer: issuer.issuer,
                    clientId: issuer.clientId,
                    keyServiceURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
                    storeDirectory: root.appending(path: "store")
                )
            )
            for expectedFetches in [1, 2] {
                let userId = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    await Browser.follow(url)
                }
                #expect(userId == "hostile-test-user")
                #expect(issuer.keySetFetches == expectedFetches)
            }
        }
    }

    @Test("a header alg other than the one the issuer's key declares is refused")
    func algorithmMismatch() async throws {
        try await Self.expectRefused(
            "the issuer's key is for RS256",
            initialKeys: nil,
            idToken: { nonce, issuer in
                issuer.publish([issuer.publicJWK(alg: "RS256")])
                return try await issuer.sign(issuer.validClaims(nonce: nonce))
            }
        )
    }
}
