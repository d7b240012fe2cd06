import CredentialVault
import Foundation
import JWTKit
import Testing

/// What each client authentication method puts on the wire, seen by a test token endpoint over real HTTP
/// (RFC 6749 section 2.3.1, RFC 7523 section 3). django-oauth-toolkit checks the secret methods end to end in
/// the interop suite; it has no private_key_jwt, so the assertion is checked here with jwt-kit.
@Suite("Client authentication at the token endpoint")
struct ClientAuthenticationTests {
    static let valid: TestIssuer.IDTokenMaker = { nonce, issuer in
        try await issuer.sign(issuer.validClaims(nonce: nonce))
    }

    /// Runs one OpenID Connect login with `authentication` and returns what the token endpoint saw, and the issuer.
    static func tokenRequest(
        with authentication: ClientAuthentication,
        listing methods: [String]? = nil,
        signingAlgorithms: [String]? = nil
    ) async throws -> TestIssuer.TokenRequest {
        try await login(with: authentication, listing: methods, signingAlgorithms: signingAlgorithms).request
    }

    /// Runs one OpenID Connect login with `authentication` and returns what the token endpoint saw, the issuer's
    /// URL and the login's error, if any.
    static func login(
        with authentication: ClientAuthentication,
        listing methods: [String]? = nil,
        signingAlgorithms: [String]? = nil
    ) async throws -> (request: TestIssuer.TokenRequest, issuer: URL) {
        try await TestIssuer.with(tokenAuthMethods: methods, signingAlgorithms: signingAlgorithms, idToken: valid) {
            issuer in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            let vault = try Vault(
                configuration: VaultConfiguration(
                    issuer: issuer.issuer,
                    clientId: "client:with space",
                    clientAuthentication: authentication,
                    keyServiceURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
                    storeDirectory: root.appending(path: "store")
                )
            )
            _ = try? await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in await Browser.follow(url)
            }
            return (try #require(issuer.tokenRequests.first), issuer.issuer)
        }
    }

    /// The error of an OpenID Connect login with `authentication` at an issuer listing `signingAlgorithms`, and
    /// how many requests reached its token endpoint.
    static func loginError(
        with authentication: ClientAuthentication,
        signingAlgorithms: [String]
    ) async throws -> (error: VaultError?, tokenRequests: Int) {
        try await TestIssuer.with(signingAlgorithms: signingAlgorithms, idToken: valid) { issuer in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            let vault = try Vault(
                configuration: VaultConfiguration(
                    issuer: issuer.issuer,
                    clientId: "client",
                    clientAuthentication: authentication,
                    keyServiceURL: URL(string: "http://127.0.0.1:9/keyservice/v1/")!,
                    storeDirectory: root.appending(path: "store")
                )
            )
            do {
                _ = try await vault.auth.performOpenIDConnectFlow(timeout: .seconds(60)) { url in
                    await Browser.follow(url)
                }
                return (nil, issuer.tokenRequests.count)
            } catch let error as VaultError {
                return (error, issuer.tokenRequests.count)
            }
        }
    }

    @Test("a public client sends its client_id and nothing else")
    func publicClient() async throws {
        let seen = try await Self.tokenRequest(with: .none)
        #expect(seen.authorization == nil)
        #expect(seen.fields["client_id"] == "client:with space")
        #expect(seen.fields["client_secret"] == nil && seen.fields["client_assertion"] == nil)
    }

    @Test("client_secret_basic: both parts form-encoded, joined by a colon, base64 (RFC 6749 section 2.3.1)")
    func basic() async throws {
        let seen = try await Self.tokenRequest(with: try .clientSecret("s3cr:t+/", method: .clientSecretBasic))
        // From a shell: printf 'client%3Awith%20space:s3cr%3At%2B%2F' | base64
        #expect(seen.authorization == "Basic Y2xpZW50JTNBd2l0aCUyMHNwYWNlOnMzY3IlM0F0JTJCJTJG")
        #expect(seen.fields["client_secret"] == nil)
    }

    @Test("client_secret_post: client_id and client_secret in the form, no Authorization header")
    func post() async throws {
        let seen = try await Self.tokenRequest(with: try .clientSecret("s3cr:t+/", method: .clientSecretPost))
        #expect(seen.authorization == nil)
        #expect(seen.fields["client_id"] == "client:with space")
        #expect(seen.fields["client_secret"] == "s3cr:t+/")
    }

    @Test("a secret with no method and a discovery document that lists none goes by client_secret_basic")
    func secretDefault() async throws {
        let seen = try await Self.tokenRequest(with: try .clientSecret("secret"))
        #expect(seen.authorization?.hasPrefix("Basic ") == true)
    }

    @Test("a secret with no method goes the way discovery lists: client_secret_post when it lists only that")
    func secretFromDiscovery() async throws {
        let post = try await Self.tokenRequest(with: try .clientSecret("secret"), listing: ["client_secret_post"])
        #expect(post.authorization == nil && post.fields["client_secret"] == "secret")
        let basic = try await Self.tokenRequest(
            with: try .clientSecret("secret"),
            listing: ["private_key_jwt", "client_secret_basic", "client_secret_post"]
        )
        #expect(basic.authorization?.hasPrefix("Basic ") == true && basic.fields["client_secret"] == nil)
    }

    @Test(
        "private_key_jwt: an assertion that verifies under the client's key, iss = sub = client, aud = the endpoint",
        arguments: ["ES256", "RS256"]
    )
    func privateKeyJWT(algorithm: String) async throws {
        let keys = JWTKeyCollection()
        let pem: String
        if algorithm == "ES256" {
            let key = ES256PrivateKey()
            pem = key.pemRepresentation
            await keys.add(ecdsa: key.publicKey)
        } else {
            let key = try Insecure.RSA.PrivateKey(pem: Self.rsaKeyPEM)
            pem = Self.rsaKeyPEM
            await keys.add(rsa: key.publicKey, digestAlgorithm: .sha256)
        }
        let authentication = try ClientAuthentication.privateKeyJWT(pem: pem, keyId: "client-key")
        #expect(String(describing: authentication) == "ClientAuthentication(private_key_jwt)")
        let first = try await Self.tokenRequest(with: authentication)
        let second = try await Self.tokenRequest(with: authentication)
        #expect(first.authorization == nil)
        #expect(first.fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        let assertion = try #require(first.fields["client_assertion"])
        let claims = try await keys.verify(assertion, as: AssertionClaims.self)
        let jwt = try JWT(token: assertion)
        #expect(jwt.algorithm == algorithm)
        #expect(jwt.header["kid"]?.stringValue == "client-key")
        #expect(claims.iss == "client:with space" && claims.sub == "client:with space")
        #expect(claims.aud.hasSuffix("/token") && claims.aud.hasPrefix("http://127.0.0.1:"))
        #expect(claims.exp - claims.iat == 60)
        #expect(claims.jti.count >= 22)
        let again = try JWT(token: try #require(second.fields["client_assertion"]))
        #expect(again["jti"] as String? != claims.jti)
    }

    @Test(
        "with no algorithm configured, an RSA key signs what the server lists: RS384 before RS256 (SMART's rule)",
        arguments: [
            (["RS256", "RS384", "ES384"], "RS384"), (["RS384"], "RS384"), (["RS256", "ES256"], "RS256"),
            (["PS256", "RS256"], "RS256"),
        ]
    )
    func algorithmFromDiscovery(listed: [String], expected: String) async throws {
        let authentication = try ClientAuthentication.privateKeyJWT(pem: Self.rsaKeyPEM, keyId: "k1")
        let seen = try await Self.tokenRequest(with: authentication, signingAlgorithms: listed)
        let jwt = try JWT(token: try #require(seen.fields["client_assertion"]))
        #expect(jwt.algorithm == expected)
        #expect(jwt.header["kid"]?.stringValue == "k1")
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PrivateKey(pem: Self.rsaKeyPEM).publicKey,
            digestAlgorithm: expected == "RS384" ? .sha384 : .sha256
        )
        _ = try await keys.verify(try #require(seen.fields["client_assertion"]), as: AssertionClaims.self)
    }

    @Test("a P-384 key signs ES384; a server that lists no algorithm this key signs is refused before any request")
    func algorithmRefused() async throws {
        let p384 = try ClientAuthentication.privateKeyJWT(pem: ES384PrivateKey().pemRepresentation, keyId: "ec")
        let seen = try await Self.tokenRequest(with: p384, signingAlgorithms: ["RS384", "ES384"])
        #expect(try JWT(token: try #require(seen.fields["client_assertion"])).algorithm == "ES384")

        let (error, requests) = try await Self.loginError(with: p384, signingAlgorithms: ["RS384", "RS256"])
        #expect(error?.isConfigurationError == true)
        #expect(error?.reason.contains("RS384, RS256") == true, "\(String(describing: error))")
        #expect(requests == 0)
        let pinned = try ClientAuthentication.privateKeyJWT(pem: Self.rsaKeyPEM, keyId: "k", algorithm: "RS256")
        let (pinnedError, _) = try await Self.loginError(with: pinned, signingAlgorithms: ["RS384", "ES384"])
        #expect(pinnedError?.isConfigurationError == true)
        #expect(pinnedError?.reason.contains("configured to be signed with RS256") == true)
    }

    @Test("aud is the token endpoint by default, the issuer when configured so; the key id and audience are readable")
    func audience() async throws {
        let byDefault = try ClientAuthentication.privateKeyJWT(pem: Self.rsaKeyPEM, keyId: "k1")
        #expect(byDefault.keyId == "k1" && byDefault.assertionAudience == .tokenEndpoint)
        let (tokenRequest, tokenIssuer) = try await Self.login(with: byDefault)
        let tokenClaims = try JWT(token: try #require(tokenRequest.fields["client_assertion"]))
        #expect(tokenClaims["aud"] as String? == tokenIssuer.absoluteString + "/token")

        let toIssuer = try ClientAuthentication.privateKeyJWT(pem: Self.rsaKeyPEM, keyId: "k1", audience: .issuer)
        let (issuerRequest, issuer) = try await Self.login(with: toIssuer)
        let issuerClaims = try JWT(token: try #require(issuerRequest.fields["client_assertion"]))
        #expect(issuerClaims["aud"] as String? == issuer.absoluteString)
        #expect(ClientAuthentication.none.keyId == nil && ClientAuthentication.none.assertionAudience == nil)
        #expect(throws: VaultError.self) { try ClientAuthentication.privateKeyJWT(pem: Self.rsaKeyPEM, keyId: "") }
    }

    @Test("a PEM that is neither an RSA nor a P-256 private key is a configuration error")
    func badKey() {
        let error = #expect(throws: VaultError.self) {
            try ClientAuthentication.privateKeyJWT(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
        }
        #expect(error?.isConfigurationError == true)
    }

    @Test("a description names the method and never shows the secret")
    func redacted() throws {
        let authentication = try ClientAuthentication.clientSecret("top-secret-value", method: .clientSecretPost)
        #expect(!String(describing: authentication).contains("top-secret-value"))
        #expect(!String(reflecting: authentication).contains("top-secret-value"))
        var dumped = ""
        dump(authentication, to: &dumped)
        #expect(!dumped.contains("top-secret-value") && dumped.contains("client_secret_post"), "\(dumped)")
        #expect(String(describing: authentication) == "ClientAuthentication(client_secret_post)")
        #expect(String(describing: ClientAuthentication.none) == "ClientAuthentication(none)")
        #expect(ClientAuthentication.none.method == ClientAuthentication.Method.none)
    }

    private struct AssertionClaims: JWTPayload {
        let iss: String
        let sub: String
        let aud: String
        let jti: String
        let iat: Int
        let exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A 2048-bit RSA key made for this test with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`.
    static let rsaKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDk65UNveE3tzJn
        7yMzp0ts542T+OY0KKrN4BLsDVssz7XOkgdQ4LV933nAGoYgUt8prWNfRpH2vhIU
        HXDC0HELYj1w3OiRIt7NBfs2nJnrlmjR26GmI7v7uCLVnCXvgnpcTePNEzczAoDd
        I/tgarY/fiLKMKagNKmyAQ2zJkPtwNF8ORqt4cd6nvtclbk1NjEK2WKqexEJXS82
        8bz8Zx/C1GsW5aF53ddFN6o2+UtesfrdnRfd4vz8vzN5ccJprXcf3Rxpm4WyNd8G
        lG2o6Q8LKPmTFAFOLCdhV8610uNxAkRP6Ta8MDuLFb8frWRb+d50+f3nsnagbsby
        IiNZ4G/fAgMBAAECggEATzXpJJEgXhwI2AfaQWRQ6AUTazFDzqaHu6ceRQm2E8Jn
        oWvMFkM66awrP7qt0H98crppWS1dEmjgbo9lVjOz+gFrSyNVYesT9xNrwpDbfbZU
        3NDHlWpmAIrNmuZmBgM6/beB7JMKlZ73Ig3yTIGAQGYP+bBt559xXIOazvOdq6VW
        Dn4QnJOD4WpwJbnxqP8Fh0FsmKWb0tFZIm31QTJb5W7jZpx1RmyoUnPYuXQfsbVC
        VqWum6O7cd2ySKU9qdAfCMmWDy/A0GaV2FgB5gXLG+I0x5w4GHe3uK/KVlApvRkG
        dEAIWSGzmqr4Tlyn4s0Zjs+51Vul2pkQ56OYu9EsuQKBgQDzYIP7sSwbPK5CqcEA
        rmJ/LD5BD14cYX4sZ/dCl1rtihkKs5Cy2l51L5yGCOTgFggEMiYiLcIRUYKA5s2/
        WvjvXvM+orL6xnXdfxzxAE7Si68eO1LWV1YE42jPW+4BS31qLfl6JNhDpZ9rduVa
        cXIEoTaEejd8+nOFc6DaT9F9/QKBgQDwyx06DQVSmNXkfJM6p8KtKK9LiEfh4JuJ
        jmHDtBvRrkCn7o9r67AHuepDg8mPa/cOL46EVPGYpJ7DXfAVt65StS1jK4dyOu0l
        1dYhhbv9JdxPzUi3w4e7DsyWoiv1SipmC4LWJcao4XK51QAv8YqRRiPlvpBJT9YT
        WSIDcwv+CwKBgQDVfIRJ9FBMVB5IO8AhaNbd12GEkIZtPtf++/PZZgtM8yakTH9R
        ZFwXT3xt1r9uEeVWSOdKc/kYV/eyOsOgZ5yV3SRifTWi5RPfB/HLNgnuhrlGO6Oe
        gV3jS9hUjL9qQ13wFgQRMODD9jSxf8oQXBM4HHJGIy8pYkiTd6pR1lJdwQKBgQCg
        7Z6i5YDhKvQIuJlNYkFhqQc+293uwEYzMM12FjFheawMkAuafPIwt7gxVyqmh+md
        uXruRjcRZTQWLfn/Cbuf2yZyWO01EtzbpIZv8QkqrtsHGpO2/R8BjWp+YfQvA1pC
        yP6wUJ7sz3/1Yr21TSDm5pGnQiz8UjcoxzFMTN9+8QKBgAfe2HObGcOr58JUgpZG
        QGbksIUhfO/TALCoztoGVypLwTljfEv37OuKRzu+JBGzNvY3f6TOR62/ixrc7RIl
        Jev/XMMeIiYdXQ2DtdAuCtk5Yhi67H1qIZa+RTgJEwO+wWQOIf+A+ZhPqRs9nD2M
        egGEjUujD5p6UQ4QQyTVOMX3
        -----END PRIVATE KEY-----
        """
}
