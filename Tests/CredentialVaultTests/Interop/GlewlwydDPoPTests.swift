import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultCrypto
import VaultTestSupport

/// DPoP (RFC 9449) against a real server that implements it: glewlwyd 2.7.5 from Debian (its draft 07), over https
/// behind nginx, configured through its admin API as an admin would. glewlwyd verifies every proof (signature, `typ`,
/// `htm`, `htu` byte for byte, `iat`, a `jti` seen once, `ath` at its userinfo endpoint), binds the refresh token to
/// the key for every client, and with its "nonce mandatory" option asks for a nonce per client.
///
/// Serialized: each test starts its own glewlwyd and nginx.
@Suite("DPoP against glewlwyd (interop)", .serialized)
struct GlewlwydDPoPTests {
    static let password = "glewlwyd interop password"

    struct Setup {
        let glewlwyd: Glewlwyd
        let keys: KeyServiceMockServer
        let root: URL
        let transport: RecordingTransport

        /// Runs `body` with a glewlwyd, a KeyServiceMock and a store directory, all gone before returning.
        static func with(
            dpopNonceRequired: Bool = false,
            isolation: isolated (any Actor)? = #isolation,
            _ body: (Setup) async throws -> Void
        ) async throws {
            try await Glewlwyd.with(dpopNonceRequired: dpopNonceRequired) { glewlwyd in
                var mock = KeyServiceMockConfiguration()
                mock.tls = try TestTLS.server()
                try await KeyServiceMockServer.withServer(mock) { keys in
                    try await TemporaryDirectory.with { root in
                        let transport = RecordingTransport(base: TestTLS.transport())
                        try await body(Setup(glewlwyd: glewlwyd, keys: keys, root: root, transport: transport))
                    }
                }
            }
        }

        func vault(
            clientId: String? = nil,
            dpop: DPoPSetting = .whenOffered,
            store: String = "store",
            sleep: (@Sendable (Duration) async throws -> Void)? = nil
        ) throws -> Vault {
            var configuration = VaultConfiguration(
                issuer: glewlwyd.issuer,
                clientId: clientId ?? glewlwyd.codeClientId,
                redirectURI: glewlwyd.redirectURI,
                keyServiceURL: keys.keyServiceURL,
                storeDirectory: root.appending(path: store),
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes
            )
            configuration.trustRoots = try TestTLS.trustRoots()
            configuration.dpop = dpop
            if let sleep { configuration.sleep = sleep }
            return try Vault(configuration: configuration, transport: transport)
        }

        /// The code flow through glewlwyd's login, as a browser does it; the redirect lands on the vault's listener.
        @discardableResult
        func login(_ vault: Vault) async throws -> String {
            let glewlwyd = glewlwyd
            return try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(30)) { url in
                let redirect: URL
                do {
                    redirect = try await glewlwyd.driveLogin(authorizationURL: url)
                } catch {
                    Issue.record(error, "the browser's part of the login failed: \(glewlwyd.logTail().suffix(1500))")
                    return
                }
                _ = try? await TestTLS.transport().send(HTTPRequest(method: "GET", url: redirect, timeout: 60))
            }
        }

        /// The requests to the token endpoint so far, with their answers.
        var tokenExchanges: [(request: HTTPRequest, response: HTTPResponse?)] {
            transport.exchanges.filter { $0.request.url == glewlwyd.tokenEndpoint }
        }

        var userinfo: URL { glewlwyd.issuer.appending(path: "userinfo") }
    }

    /// The JSON of a JWT's segment `index` (0: header, 1: claims).
    static func segment(_ jwt: String, _ index: Int) throws -> [String: Any] {
        let part = jwt.split(separator: ".", omittingEmptySubsequences: false)[index]
        return try #require(try JSONSerialization.jsonObject(with: Base64URL.decode(part)) as? [String: Any])
    }

    static func json(_ response: HTTPResponse?) -> [String: Any] {
        guard let body = response?.body else { return [:] }
        return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    @Test("login with DPoP: glewlwyd verifies our proofs, answers token_type DPoP, and binds the JWT to our key")
    func loginWithDPoP() async throws {
        try await Setup.with { setup in
            let vault = try setup.vault()
            let userId = try await setup.login(vault)
            #expect(!userId.isEmpty)
            let key = try #require(await vault.auth.refreshToken?.dpopKey)
            // The code exchange went out with a proof, and glewlwyd took it: it says DPoP only for a verified proof.
            let exchange = try #require(setup.tokenExchanges.last)
            #expect(exchange.request.headers["DPoP"] != nil)
            #expect(exchange.response?.status == 200, "\(setup.glewlwyd.logTail())")
            #expect(Self.json(exchange.response)["token_type"] as? String == "DPoP")
            let token = try await vault.auth.getAccessToken()
            #expect(token.tokenType == "DPoP")
            let claims = try Self.segment(token.token, 1)
            #expect((claims["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
            // A resource request with the proof (ath over the token) passes glewlwyd's check at its userinfo endpoint.
            let answer = try await vault.auth.sendAuthorized(
                HTTPRequest(method: "GET", url: setup.userinfo, timeout: 60)
            )
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            // The bound token as a bearer token is refused.
            let bearer = try await setup.transport.send(
                HTTPRequest(
                    method: "GET",
                    url: setup.userinfo,
                    headers: ["Authorization": "Bearer \(token.token)"],
                    timeout: 60
                )
            )
            #expect(bearer.status != 200)
        }
    }

    @Test("a client registered with dpop_bound_access_tokens logs in with DPoP and gets bound tokens")
    func clientRequiringDPoP() async throws {
        try await Setup.with { setup in
            let vault = try setup.vault(clientId: setup.glewlwyd.dpopClientId)
            try await setup.login(vault)
            let key = try #require(await vault.auth.refreshToken?.dpopKey)
            let token = try await vault.auth.getAccessToken()
            #expect(token.isDPoPBound)
            #expect((try Self.segment(token.token, 1)["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
        }
    }

    @Test("glewlwyd's use_dpop_nonce (HTTP 400): one retry, exactly one, with its nonce, kept for the next requests")
    func nonceRetry() async throws {
        try await Setup.with(dpopNonceRequired: true) { setup in
            let vault = try setup.vault()
            try await setup.login(vault)
            _ = try await vault.auth.getAccessToken(forceRefresh: true)
            let answer = try await vault.auth.sendAuthorized(
                HTTPRequest(method: "GET", url: setup.userinfo, timeout: 60)
            )
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")

            let exchanges = setup.transport.exchanges.filter {
                $0.request.url == setup.glewlwyd.tokenEndpoint || $0.request.url == setup.userinfo
            }
            let asked = exchanges.indices.filter {
                Self.json(exchanges[$0].response)["error"] as? String == "use_dpop_nonce"
            }
            // Only the first request (the code exchange, before any nonce was known) is refused for want of one.
            #expect(asked == [0], "\(exchanges.map { $0.response?.status ?? 0 })")
            #expect(exchanges.first?.response?.headers["dpop-nonce"] != nil)
            let seen = exchanges.map {
                "\($0.response?.status ?? 0) nonce:\($0.response?.headers["dpop-nonce"] != nil)"
            }
            let refusal = try #require(exchanges.first?.response)
            #expect(refusal.status == 400, "\(seen)")
            // The refusal's nonce goes out in the retry, and glewlwyd's newest nonce in every later proof (it changes
            // its nonce only every `oauth-dpop-nonce-counter` uses, 10 by default, so the later answers carry none).
            var newest: String?
            for index in exchanges.indices {
                if index > 0 {
                    let proof = try #require(exchanges[index].request.headers["DPoP"])
                    #expect(try Self.segment(proof, 1)["nonce"] as? String == newest, "\(seen)")
                }
                if let given = exchanges[index].response?.headers["dpop-nonce"] { newest = given }
            }
            // The code exchange twice, the refresh and the resource request once each: four requests.
            #expect(exchanges.count == 4, "\(seen)")
            #expect(exchanges.dropFirst().allSatisfy { $0.response?.status == 200 })
        }
    }

    @Test("refresh after a restart: the key comes out of the envelope with the refresh token")
    func refreshAfterRestart() async throws {
        try await Setup.with(dpopNonceRequired: true) { setup in
            let vault = try setup.vault()
            let userId = try await setup.login(vault)
            try await vault.auth.storeRefreshToken(withNewPassword: Self.password)
            let key = try #require(await vault.auth.refreshToken?.dpopKey)

            let restarted = try setup.vault()
            let token = try await restarted.auth.loginWithPassword(password: Self.password)
            #expect(token.userId == userId)
            #expect(token.isDPoPBound)
            #expect(await restarted.auth.refreshToken?.dpopKey == key)
            #expect((try Self.segment(token.token, 1)["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
            let forced = try await restarted.auth.getAccessToken(forceRefresh: true)
            #expect(forced.isDPoPBound && forced.token != token.token)
            // A new process knows no nonce: its first refresh is refused once for want of one, then goes through.
            let asked = setup.tokenExchanges.filter { Self.json($0.response)["error"] as? String == "use_dpop_nonce" }
            #expect(asked.count == 2)
        }
    }

    @Test("a stolen refresh token is refused without the key or with another key's proof; nothing is lost")
    func stolenRefreshToken() async throws {
        try await Setup.with { setup in
            let vault = try setup.vault()
            let userId = try await setup.login(vault)
            try await vault.auth.storeRefreshToken(withNewPassword: Self.password)
            let stolen = try #require(await vault.auth.refreshToken?.token)
            let endpoint = setup.glewlwyd.tokenEndpoint
            let fields = [
                "grant_type": "refresh_token", "client_id": setup.glewlwyd.codeClientId, "refresh_token": stolen,
            ]

            let bare = try await Browser.postForm(endpoint, fields)
            let thief = DPoPProofs(key: DPoPKey(), nonces: DPoPNonces())
            let proved = try await Browser.postForm(
                endpoint,
                fields,
                headers: ["DPoP": thief.proof(method: "POST", url: endpoint)]
            )
            #expect(bare.status != 200 && proved.status != 200, "\(bare.status) \(proved.status)")
            #expect(Self.json(bare)["access_token"] == nil && Self.json(proved)["access_token"] == nil)

            // The thief's own vault: the token sealed with a key of its own, and again with none.
            for thiefKey in [DPoPKey(), nil] {
                let store = "thief-\(thiefKey == nil ? "bearer" : "key")"
                let thiefVault = try setup.vault(store: store)
                try await thiefVault.userStorage.storeRefreshToken(
                    RefreshToken(token: stolen, userId: userId, dpopKey: thiefKey),
                    withNewPassword: Self.password
                )
                let error = await #expect(throws: VaultError.self) {
                    try await thiefVault.auth.loginWithPassword(password: Self.password)
                }
                // glewlwyd answers both with 403 invalid_dpop_proof: a refusal the vault names, without the token.
                #expect(error?.kind == .serverRefused && error?.httpStatus == 403, "\(String(describing: error))")
                #expect(error?.description.contains("invalid_dpop_proof") == true)
                #expect(error?.description.contains(stolen.prefix(16)) == false)
            }

            // The owner still refreshes, from memory and from the envelope.
            #expect(try await vault.auth.getAccessToken(forceRefresh: true).isDPoPBound)
            let restarted = try setup.vault()
            #expect(try await restarted.auth.loginWithPassword(password: Self.password).isDPoPBound)
        }
    }
}
