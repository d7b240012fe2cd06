import CryptoExtras
import Foundation
import VaultCrypto

/// The private key a login's tokens are bound to (DPoP, RFC 9449): a P-256 key made by swift-crypto at the login,
/// sealed in the envelope beside the refresh token, and nowhere else.
///
/// `description` and the mirror show only the key's thumbprint (RFC 7638), never the key.
public struct DPoPKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let privateKey: P256.Signing.PrivateKey

    /// A new random key (one per login).
    public init() {
        privateKey = P256.Signing.PrivateKey()
    }

    /// The key as sealed in the envelope's record (its raw scalar, base64url); nil when `sealed` is not one.
    init?(sealed: String) {
        guard let raw = try? Base64URL.decode(sealed),
            let key = try? P256.Signing.PrivateKey(rawRepresentation: raw)
        else { return nil }
        privateKey = key
    }

    /// The form sealed in the envelope's record: the raw private scalar, base64url. A secret: never log it.
    var sealed: String { Base64URL.encode(privateKey.rawRepresentation) }

    /// The public half as a JWK (RFC 7517, RFC 7518 section 6.2): `kty`, `crv`, `x`, `y`.
    public var publicJWK: [String: String] {
        let raw = privateKey.publicKey.x963Representation  // 0x04 || x || y
        return [
            "kty": "EC", "crv": "P-256",
            "x": Base64URL.encode(Data(raw.dropFirst().prefix(32))),
            "y": Base64URL.encode(Data(raw.dropFirst(33))),
        ]
    }

    /// The JWK SHA-256 thumbprint of the public key (RFC 7638), base64url: the `jkt` a server binds tokens to.
    public var thumbprint: String {
        let jwk = publicJWK
        // RFC 7638 section 3.2: the required members only, in lexicographic order, no white space.
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]!)","y":"\#(jwk["y"]!)"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    /// Two keys are equal when their public halves are.
    public static func == (lhs: DPoPKey, rhs: DPoPKey) -> Bool {
        lhs.privateKey.publicKey.rawRepresentation == rhs.privateKey.publicKey.rawRepresentation
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(privateKey.publicKey.rawRepresentation)
    }

    /// `DPoPKey(jkt: …)`: the thumbprint, never the key.
    public var description: String { "DPoPKey(jkt: \(thumbprint))" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the key.
    public var customMirror: Mirror { Mirror(self, children: ["jkt": thumbprint], displayStyle: .struct) }
}
