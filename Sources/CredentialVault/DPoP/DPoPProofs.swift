import CryptoExtras
public import Foundation
import VaultCrypto

/// Makes the DPoP proofs of one login (RFC 9449 section 4): the one place proofs are made, for the token endpoint,
/// the revocation endpoint, FHIR and other resource requests (``Auth/authorizing(_:)``) and the CLI's `dpop-proof`.
///
/// A proof is a JWT signed with ES256 by the login's ``DPoPKey``: header `typ: dpop+jwt`, `alg: ES256` and the
/// public `jwk`; claims `jti` (fresh and random), `htm`, `htu` (the URL without query or fragment), `iat`, `ath`
/// (base64url SHA-256 of the access token) on resource requests, and `nonce` when the server gave one
/// (``DPoPNonces``). A proof is a credential for one request: never log it.
public struct DPoPProofs: Sendable {
    /// The key proofs are signed with.
    public let key: DPoPKey
    /// The servers' newest nonces.
    public let nonces: DPoPNonces
    private let now: @Sendable () -> Date

    /// Proofs signed by `key`, with the nonces in `nonces` and `iat` from `now`.
    public init(key: DPoPKey, nonces: DPoPNonces, now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.nonces = nonces
        self.now = now
    }

    /// A proof for one `method` request to `url`; with `accessToken` (a resource request) it carries `ath`. It carries
    /// `nonce` when given (one the caller got from the server), else the server's newest kept in ``nonces``.
    public func proof(method: String, url: URL, accessToken: String? = nil, nonce: String? = nil) -> String {
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": key.publicJWK]
        var claims: [String: Any] = [
            "jti": Base64URL.encode(SecureRandom.bytes(count: 16)),
            "htm": method.uppercased(),
            "htu": Self.targetURI(url),
            "iat": Int(now().timeIntervalSince1970),
        ]
        if let accessToken { claims["ath"] = Self.accessTokenHash(accessToken) }
        if let nonce = nonce ?? nonces.nonce(for: url) { claims["nonce"] = nonce }
        let signingInput = Self.segment(header) + "." + Self.segment(claims)
        // swift-crypto's ECDSA; the raw form (r || s, 64 bytes) is the JWS ES256 signature (RFC 7518 section 3.4).
        // Signing fails only without system randomness, and then nothing else works either.
        let signature = try! key.privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// `htu` for `url` (RFC 9449 section 4.2): the URL without its query and fragment.
    public static func targetURI(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    /// `ath` for `accessToken` (RFC 9449 section 4.2): base64url of the SHA-256 of its ASCII.
    public static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))))
    }

    /// The nonce a server asks for when it refuses a request for want of one (RFC 9449 sections 8 and 9): a token
    /// endpoint's 400 (some answer 401 or 403) with `error` `use_dpop_nonce`, or a resource server's 401 with
    /// `WWW-Authenticate: DPoP error="use_dpop_nonce"`, each with a `DPoP-Nonce` header. Nil for any other answer.
    public static func nonceRequested(by response: HTTPResponse) -> String? {
        guard [400, 401, 403].contains(response.status), let nonce = response.headers["dpop-nonce"], !nonce.isEmpty
        else { return nil }
        if let challenge = response.headers["www-authenticate"], challenge.contains("use_dpop_nonce") { return nonce }
        guard response.body.count <= 16 * 1024, let object = try? StrictJSONParser.parse(Array(response.body)),
            object["error"]?.stringValue == "use_dpop_nonce"
        else { return nil }
        return nonce
    }

    private static func segment(_ object: [String: Any]) -> String {
        // Strings, numbers and a string map always encode.
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Base64URL.encode(data)
    }
}
