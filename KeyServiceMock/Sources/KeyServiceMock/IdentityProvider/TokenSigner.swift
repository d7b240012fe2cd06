import Foundation
import VaultCrypto

/// Signs and verifies compact JWS tokens with the provider's Ed25519 key (alg EdDSA, RFC 8037).
struct TokenSigner: Sendable {
    let signingKey: Ed25519SigningKey
    /// The key's RFC 7638 thumbprint, used as `kid`.
    let keyId: String
    private let encodedHeader: String

    init(signingKey: Ed25519SigningKey) {
        self.signingKey = signingKey
        let x = Base64URL.encode(signingKey.publicKey)
        // RFC 7638: the required members in lexicographic order, no whitespace.
        keyId = Base64URL.encode(SHA256.hash(Data(#"{"crv":"Ed25519","kty":"OKP","x":"\#(x)"}"#.utf8)))
        encodedHeader = Base64URL.encode(Data(#"{"alg":"EdDSA","kid":"\#(keyId)","typ":"JWT"}"#.utf8))
    }

    /// The signing key made from the state's seed (kept in its own file beside the pepper, or in memory).
    init(state: StateStore) throws {
        self.init(signingKey: try Ed25519SigningKey(seed: state.signingSeed))
    }

    /// The public key as a JSON Web Key Set.
    var jwks: [String: [[String: String]]] {
        [
            "keys": [
                [
                    "kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(signingKey.publicKey), "kid": keyId,
                    "use": "sig", "alg": "EdDSA",
                ]
            ]
        ]
    }

    func sign(_ claims: TokenClaims) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let payload = Base64URL.encode((try? encoder.encode(claims)) ?? Data())
        let signingInput = encodedHeader + "." + payload
        return signingInput + "." + Base64URL.encode(signingKey.signature(for: Data(signingInput.utf8)))
    }

    /// The claims of a token this signer issued, `nil` for anything else; expiry is not checked here.
    func verify(_ token: String) -> TokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == encodedHeader,
            let signature = try? Base64URL.decode(parts[2]),
            Ed25519.isValidSignature(
                signature,
                for: Data(token[..<parts[2].startIndex].dropLast().utf8),
                publicKey: signingKey.publicKey
            ),
            let payload = try? Base64URL.decode(parts[1])
        else { return nil }
        return try? JSONDecoder().decode(TokenClaims.self, from: payload)
    }
}
