import Foundation
import JWTKit
import VaultCrypto

/// A confidential client's private key and the `client_assertion` JWTs it signs (RFC 7523 section 3): `iss` and
/// `sub` the client id, `aud` the endpoint the assertion goes to, a random `jti`, `iat` now and `exp` a minute
/// later. jwt-kit signs: RS256 with an RSA key, ES256 with a P-256 key.
struct ClientAssertionKey: Sendable {
    private enum Key: Sendable {
        case rsa(Insecure.RSA.PrivateKey)
        case ecdsa(ES256PrivateKey)
    }

    private let key: Key
    private let keyId: String?

    /// How long an assertion is valid: short, as RFC 7523 section 3 advises.
    static let lifetime: TimeInterval = 60

    init(pem: String, keyId: String?) throws(VaultError) {
        if let rsa = try? Insecure.RSA.PrivateKey(pem: pem) {
            key = .rsa(rsa)
        } else if let ecdsa = try? ES256PrivateKey(pem: pem) {
            key = .ecdsa(ecdsa)
        } else {
            throw .invalidConfiguration(
                "the client's private key is neither an RSA key of 2048 bits or more nor a P-256 key in PEM"
            )
        }
        self.keyId = keyId
    }

    private struct Claims: JWTPayload {
        let iss: String
        let sub: String
        let aud: String
        let jti: String
        let iat: Int
        let exp: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func assertion(clientId: String, audience: URL, now: Date) async throws(VaultError) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        let claims = Claims(
            iss: clientId,
            sub: clientId,
            aud: audience.absoluteString,
            jti: Base64URL.encode(SecureRandom.bytes(count: 16)),
            iat: issuedAt,
            exp: issuedAt + Int(Self.lifetime)
        )
        let kid = keyId.map { JWKIdentifier(string: $0) }
        do {
            let keys = JWTKeyCollection()
            switch key {
            case .rsa(let rsa): await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: kid)
            case .ecdsa(let ecdsa): await keys.add(ecdsa: ecdsa, kid: kid)
            }
            return try await keys.sign(claims, kid: kid)
        } catch {
            throw .invalidConfiguration("the client's private key could not sign an assertion")
        }
    }
}
