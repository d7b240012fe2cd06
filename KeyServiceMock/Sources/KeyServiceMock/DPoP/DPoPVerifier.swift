import Foundation
import Hummingbird
import JWTKit
import KeyServiceCore
import NIOConcurrencyHelpers
import VaultCrypto

/// The identity provider's DPoP checks (RFC 9449 sections 4.3, 7.1 and 8), with jwt-kit verifying the signature:
/// `typ` `dpop+jwt`, `alg` ES256, a public P-256 `jwk`, the signature against that key, `htm` and `htu` of this
/// request, `iat` within a minute of now, a `jti` never seen before, `ath` of the access token at a resource, and the
/// server's nonce when ``DPoPMode/requiresNonce``. It also keeps which key each session's tokens are bound to.
final class DPoPVerifier: Sendable {
    let mode: DPoPMode
    /// The nonce every token-endpoint proof must carry when the mode requires one (one per server run).
    let tokenEndpointNonce = Base64URL.encode(SecureRandom.bytes(count: 16))
    /// The resource's own nonce (userinfo): another than the token endpoint's, as a resource server may give, so a
    /// client meets `use_dpop_nonce` at each.
    let resourceNonce = Base64URL.encode(SecureRandom.bytes(count: 16))
    private let seenIds = NIOLockedValueBox<Set<String>>([])
    /// Session id → the thumbprint (RFC 7638) of the key its tokens are bound to.
    private let bindings = NIOLockedValueBox<[String: String]>([:])

    /// How far `iat` may be from now, in seconds.
    static let window: TimeInterval = 60

    init(mode: DPoPMode) {
        self.mode = mode
    }

    /// Where a refused proof was presented: the answer's form differs (RFC 9449 sections 7.1 and 8).
    enum Place {
        case tokenEndpoint
        case resource
    }

    /// The thumbprint of the key that signed `proof`, a valid proof for `method` `url` (with `ath` of `accessToken`
    /// at a resource).
    /// - Throws: ``RequestRefusal``: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to use.
    func verify(
        _ proof: String?,
        method: String,
        url: String,
        accessToken: String?,
        place: Place,
        now: Date
    ) async throws(RequestRefusal) -> String {
        func refuse(_ why: String) -> RequestRefusal { Self.refusal("invalid_dpop_proof", why, place: place) }
        guard let proof else { throw refuse("the request carries no DPoP proof") }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = try? Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(DPoPProofHeader.self, from: headerData)
        else { throw refuse("the DPoP proof is not a JWT") }
        guard header.typ == "dpop+jwt" else { throw refuse("the proof's typ must be dpop+jwt") }
        guard header.alg == "ES256" else { throw refuse("the proof's alg must be ES256 (this server's only one)") }
        guard let jwk = header.jwk, jwk.kty == "EC", jwk.crv == "P-256", let x = jwk.x, let y = jwk.y else {
            throw refuse("the proof's jwk must be a public P-256 key")
        }
        guard jwk.d == nil else { throw refuse("the proof's jwk holds a private key") }
        let claims: DPoPProofClaims
        do {
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PublicKey(parameters: (x: x, y: y)))
            claims = try await keys.verify(proof, as: DPoPProofClaims.self)
        } catch {
            throw refuse("the proof's signature does not verify with its jwk")
        }
        guard claims.htm == method else { throw refuse("htm must be \(method)") }
        guard claims.htu == url else { throw refuse("htu must be \(url)") }
        guard let iat = claims.iat, abs(iat - now.timeIntervalSince1970) <= Self.window else {
            throw refuse("iat must be within \(Int(Self.window)) s of now")
        }
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= 256 else { throw refuse("the proof has no jti") }
        guard seenIds.withLockedValue({ $0.insert(jti).inserted }) else {
            throw refuse("the proof's jti was used before (a replayed proof)")
        }
        if let accessToken {
            let expected = Base64URL.encode(SHA256.hash(Data(accessToken.utf8)))
            guard claims.ath == expected else { throw refuse("ath is not the hash of the access token") }
        }
        let nonce = place == .tokenEndpoint ? tokenEndpointNonce : resourceNonce
        if mode.requiresNonce, claims.nonce != nonce {
            throw Self.refusal("use_dpop_nonce", "use the server's DPoP-Nonce", place: place, nonce: nonce)
        }
        return Base64URL.encode(SHA256.hash(Data(#"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#.utf8)))
    }

    /// Binds the tokens of session `sessionId` to the key with thumbprint `thumbprint`.
    func bind(sessionId: String, to thumbprint: String) {
        bindings.withLockedValue { $0[sessionId] = thumbprint }
    }

    /// The thumbprint the tokens of `sessionId` are bound to; nil for bearer tokens.
    func binding(of sessionId: String) -> String? {
        bindings.withLockedValue { $0[sessionId] }
    }

    /// The refusal `error` at `place`: 400 JSON at the token endpoint, 401 with `WWW-Authenticate: DPoP` at a
    /// resource; with `nonce`, a `DPoP-Nonce` header.
    static func refusal(_ error: String, _ why: String, place: Place, nonce: String? = nil) -> RequestRefusal {
        var headers: HTTPFields = [:]
        if let nonce { headers[.dpopNonce] = nonce }
        switch place {
        case .tokenEndpoint:
            return RequestRefusal(status: .badRequest, error: error, description: why, headers: headers)
        case .resource:
            headers[.wwwAuthenticate] = #"DPoP algs="ES256", error="\#(error)", error_description="\#(why)""#
            return RequestRefusal(status: .unauthorized, error: error, description: why, headers: headers)
        }
    }
}
