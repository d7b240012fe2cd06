import CryptoExtras
import Foundation
import JWTKit
import VaultCrypto

/// A confidential client's private key and the `client_assertion` JWTs it signs (RFC 7523 section 3): `iss` and
/// `sub` the client id, `aud` the token endpoint (or the issuer, as ``audience`` says), a random `jti`, `iat` now
/// and `exp` a minute later, `kid` in the header when the key has an id. jwt-kit signs: RS384 or RS256 with an RSA
/// key, ES256 with a P-256 key, ES384 with a P-384 key. Unless one is configured, the algorithm is chosen per
/// request from the key and the server's `token_endpoint_auth_signing_alg_values_supported` (SMART's rule: RS384
/// and ES384 first).
struct ClientAssertionKey: Sendable {
    private enum Key: Sendable {
        case rsa(JWTKit.Insecure.RSA.PrivateKey)
        case p256(ES256PrivateKey)
        case p384(ES384PrivateKey)
    }

    private let key: Key
    let keyId: String?
    /// The JWS algorithm configured for the assertions; nil: chosen from the key and what the server lists.
    let configuredAlgorithm: String?
    /// The algorithms this key signs, in the order they are preferred: SMART's RS384 before RS256.
    let usableAlgorithms: [String]
    /// What the assertions name as `aud`.
    let audience: ClientAssertionAudience

    /// The algorithm of an assertion for a server that lists nothing: the configured one, else RS256 for an RSA
    /// key (what every OpenID Connect server takes), ES256 for P-256, ES384 for P-384.
    var defaultAlgorithm: String {
        configuredAlgorithm ?? (usableAlgorithms.contains("RS256") ? "RS256" : usableAlgorithms[0])
    }

    /// How long an assertion is valid: short, as RFC 7523 section 3 advises (SMART allows at most five minutes).
    static let lifetime: TimeInterval = 60

    /// The key in `pem`, signing with `algorithm` (nil: chosen per server, see ``algorithm(offered:)``), naming
    /// `audience` as `aud`.
    init(
        pem: String,
        keyId: String?,
        algorithm: String? = nil,
        audience: ClientAssertionAudience = .tokenEndpoint
    ) throws(VaultError) {
        if let rsa = try? JWTKit.Insecure.RSA.PrivateKey(pem: pem) {
            key = .rsa(rsa)
        } else if let p256 = try? ES256PrivateKey(pem: pem) {
            key = .p256(p256)
        } else if let p384 = try? ES384PrivateKey(pem: pem) {
            key = .p384(p384)
        } else {
            throw .invalidConfiguration(
                "the client's private key is neither an RSA key of 2048 bits or more nor a P-256 or P-384 key in PEM"
            )
        }
        let usable: [String] =
            switch key {
            case .rsa: ["RS384", "RS256"]
            case .p256: ["ES256"]
            case .p384: ["ES384"]
            }
        if let algorithm, !usable.contains(algorithm) {
            throw .invalidConfiguration(
                "the client's key signs \(usable.joined(separator: " or ")), not \(VaultError.printable(algorithm))"
            )
        }
        if let keyId, keyId.isEmpty {
            throw .invalidConfiguration("the client key id is empty: give the kid the server knows the key by, or none")
        }
        self.configuredAlgorithm = algorithm
        self.usableAlgorithms = usable
        self.keyId = keyId
        self.audience = audience
    }

    /// The algorithm of an assertion to a server whose `token_endpoint_auth_signing_alg_values_supported` is
    /// `offered` (nil when it lists nothing): the configured one, which the server must list when it lists any;
    /// else the first this key signs that the server lists (RS384 before RS256); else ``defaultAlgorithm``.
    /// - Throws: ``VaultError`` (a configuration error) when the server lists algorithms and none fits the key.
    func algorithm(offered: [String]?) throws(VaultError) -> String {
        guard let offered, !offered.isEmpty else { return defaultAlgorithm }
        let listed = offered.map { VaultError.printable($0, limit: 20) }.joined(separator: ", ")
        if let configuredAlgorithm {
            guard offered.contains(configuredAlgorithm) else {
                throw .invalidConfiguration(
                    "the client's assertions are configured to be signed with \(configuredAlgorithm), but the issuer "
                        + "accepts only \(listed) (token_endpoint_auth_signing_alg_values_supported)"
                )
            }
            return configuredAlgorithm
        }
        guard let chosen = usableAlgorithms.first(where: offered.contains) else {
            throw .invalidConfiguration(
                "the issuer accepts client assertions signed with \(listed) only "
                    + "(token_endpoint_auth_signing_alg_values_supported), and the client's key signs "
                    + "\(usableAlgorithms.joined(separator: " or ")): use an RSA key (RS384) or a P-384 key (ES384)"
            )
        }
        return chosen
    }

    /// A new private key in PEM: RSA of 2048 bits, or P-384 (for RS384 or ES384 assertions).
    static func generate(rsa: Bool) -> String {
        if rsa {
            // Key generation fails only when the system has no randomness; then nothing else works either.
            return try! _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        }
        return P384.Signing.PrivateKey().pemRepresentation
    }

    /// The public half as a JWK (RFC 7517): `kty`, the key's numbers, `use: sig`, `kid` when there is one and `alg`
    /// when one is configured (a key whose algorithm is chosen per server pins none), for the server's registration
    /// of the client.
    func publicJWK() -> [String: JSONValue] {
        var jwk: [String: JSONValue] = ["use": "sig"]
        if let configuredAlgorithm { jwk["alg"] = .string(configuredAlgorithm) }
        if let keyId { jwk["kid"] = .string(keyId) }
        switch key {
        case .rsa(let rsa):
            // The numbers come from swift-crypto, which jwt-kit's key is made of.
            if let numbers = try? _RSA.Signing.PublicKey(pemRepresentation: rsa.publicKey.pemRepresentation)
                .getKeyPrimitives()
            {
                jwk["kty"] = "RSA"
                // RFC 7518 section 6.3.1: unsigned big-endian, in the fewest octets (no leading zero).
                jwk["n"] = .string(Base64URL.encode(Data(numbers.modulus.drop { $0 == 0 })))
                jwk["e"] = .string(Base64URL.encode(Data(numbers.publicExponent.drop { $0 == 0 })))
            }
        case .p256(let p256):
            jwk["kty"] = "EC"
            jwk["crv"] = "P-256"
            jwk["x"] = p256.publicKey.parameters.map { .string($0.x) }
            jwk["y"] = p256.publicKey.parameters.map { .string($0.y) }
        case .p384(let p384):
            jwk["kty"] = "EC"
            jwk["crv"] = "P-384"
            jwk["x"] = p384.publicKey.parameters.map { .string($0.x) }
            jwk["y"] = p384.publicKey.parameters.map { .string($0.y) }
        }
        return jwk
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

    /// A new assertion for `clientId`, naming `audience` as `aud`, signed with `algorithm` (one of
    /// ``usableAlgorithms``).
    func assertion(clientId: String, audience: String, algorithm: String, now: Date) async throws(VaultError) -> String
    {
        let issuedAt = Int(now.timeIntervalSince1970)
        let claims = Claims(
            iss: clientId,
            sub: clientId,
            aud: audience,
            jti: Base64URL.encode(SecureRandom.bytes(count: 16)),
            iat: issuedAt,
            exp: issuedAt + Int(Self.lifetime)
        )
        let kid = keyId.map { JWKIdentifier(string: $0) }
        do {
            let keys = JWTKeyCollection()
            switch key {
            case .rsa(let rsa):
                await keys.add(rsa: rsa, digestAlgorithm: algorithm == "RS384" ? .sha384 : .sha256, kid: kid)
            case .p256(let p256): await keys.add(ecdsa: p256, kid: kid)
            case .p384(let p384): await keys.add(ecdsa: p384, kid: kid)
            }
            return try await keys.sign(claims, kid: kid)
        } catch {
            throw .invalidConfiguration("the client's private key could not sign an assertion")
        }
    }
}
