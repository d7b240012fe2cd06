import CryptoExtras
import Foundation
import JWTKit
import KeyServiceMock
import Testing
import VaultCrypto

/// A backend client's key pairs, made once per test process (RSA key generation is slow in a debug build).
///
/// Its JWK Set: `rsa-1`, an RSA 2048 key pinned to RS384; `rsa-any`, the same key with no `alg`; `ec-1`, a P-384
/// key, and `ec-256`, a P-256 key, neither with an `alg`.
struct BackendKeys: Sendable {
    static let clientId = "bulk-export"

    let rsa: JWTKit.Insecure.RSA.PrivateKey
    let ec: ES384PrivateKey
    let ec256: ES256PrivateKey

    static let shared = Result { try BackendKeys() }

    private init() throws {
        rsa = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        ec = ES384PrivateKey()
        ec256 = ES256PrivateKey()
    }

    /// The public JWK Set a client publishes, as JSON text.
    func jwks() throws -> String {
        let (modulus, exponent) = try rsa.publicKey.getKeyPrimitives()
        let point = try #require(ec.parameters)
        let point256 = try #require(ec256.parameters)
        let (n, e) = (Base64URL.encode(modulus), Base64URL.encode(exponent))
        let set: [String: Any] = [
            "keys": [
                ["kty": "RSA", "kid": "rsa-1", "alg": "RS384", "use": "sig", "n": n, "e": e],
                ["kty": "RSA", "kid": "rsa-any", "n": n, "e": e],
                ["kty": "EC", "kid": "ec-1", "crv": "P-384", "x": point.x, "y": point.y],
                ["kty": "EC", "kid": "ec-256", "crv": "P-256", "x": point256.x, "y": point256.y],
            ]
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: set), as: UTF8.self)
    }

    /// Which private key signs.
    enum Signer {
        /// The RSA key, RS384 (`rsa256`: RS256).
        case rsa, rsa256
        /// The P-384 key, ES384 (`ec256`: the P-256 key, ES256).
        case ec, ec256
        /// A P-384 key that is not in the client's JWK Set.
        case stranger
    }

    /// `claims` signed by `signer`, with `kid` (none when `nil`) and, when given, a header `alg` that overrides
    /// the signer's.
    func sign(_ claims: AssertionClaims, kid: String?, signer: Signer, alg: String? = nil) async throws -> String {
        let collection = JWTKeyCollection()
        switch signer {
        case .rsa: await collection.add(rsa: rsa, digestAlgorithm: .sha384)
        case .rsa256: await collection.add(rsa: rsa, digestAlgorithm: .sha256)
        case .ec: await collection.add(ecdsa: ec)
        case .ec256: await collection.add(ecdsa: ec256)
        case .stranger: await collection.add(ecdsa: ES384PrivateKey())
        }
        var header = JWTHeader()
        header.kid = kid
        if let alg { header.alg = alg }
        // The key was added without a kid, so it signs as the default whatever kid the header names.
        return try await collection.sign(claims, header: header)
    }
}

/// The claims of a client assertion; each one can be changed or left out.
struct AssertionClaims: JWTPayload {
    var iss: String? = BackendKeys.clientId
    var sub: String? = BackendKeys.clientId
    var aud: String?
    var exp: Int?
    var iat: Int?
    var nbf: Int?
    var jti: String? = UUID().uuidString

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A SMART backend client talking to the server: assertions, the `client_credentials` grant, the FHIR endpoint.
struct BackendClient: Sendable {
    let server: KeyServiceMockServer
    let http: HTTPClient
    let clock: ManualClock
    let keys: BackendKeys

    /// The SMART mode with the client `bulk-export` and its keys, on `clock`.
    static func configuration(clock: ManualClock, grantedScope: String? = nil) throws -> KeyServiceMockConfiguration {
        let client = RegisteredBackendClient(
            clientId: BackendKeys.clientId,
            jwks: try BackendKeys.shared.get().jwks(),
            grantedScope: grantedScope
        )
        return SMARTClient.configuration(clock: clock) { $0.backendClients = [client] }
    }

    /// Runs `body` against a server with the backend client configured.
    static func withServer(
        grantedScope: String? = nil,
        _ body: (BackendClient) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        let keys = try BackendKeys.shared.get()
        try await KeyServiceMockServer.withServer(try configuration(clock: clock, grantedScope: grantedScope)) {
            server async throws in
            try await body(BackendClient(server: server, http: HTTPClient(), clock: clock, keys: keys))
        }
    }

    var smart: SMARTClient { SMARTClient(server: server, http: http) }

    /// The token endpoint as the smart-configuration states it: the `aud` an assertion must name.
    var tokenEndpoint: String { server.issuer.absoluteString + "/protocol/openid-connect/token" }

    /// Valid claims: `aud` the token endpoint, issued now, expiring in four minutes, a fresh `jti`.
    func claims(_ adjust: (inout AssertionClaims) -> Void = { _ in }) -> AssertionClaims {
        let now = Int(clock.now.timeIntervalSince1970)
        var claims = AssertionClaims(aud: tokenEndpoint, exp: now + 240, iat: now)
        adjust(&claims)
        return claims
    }

    /// A valid assertion signed with `rsa-1` (RS384), its claims adjusted by `adjust`.
    func assertion(_ adjust: (inout AssertionClaims) -> Void = { _ in }) async throws -> String {
        try await keys.sign(claims(adjust), kid: "rsa-1", signer: .rsa)
    }

    /// `POST token` with `grant_type=client_credentials`, the assertion and `scope`; `fields` adds or replaces.
    func requestToken(
        assertion: String,
        scope: String? = "system/Patient.rs",
        _ fields: [String: String?] = [:]
    ) async throws -> HTTPAnswer {
        var form: [String: String] = [
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        ]
        form["scope"] = scope
        for (name, value) in fields { form[name] = value }
        return try await http.post(smart.oidc.url("token"), form: form)
    }
}
