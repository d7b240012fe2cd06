import Foundation
import VaultCrypto

/// Proof Key for Code Exchange (RFC 7636) with the S256 method.
public struct PKCE: Sendable {
    /// The code verifier: 43 characters of base64url over 32 random bytes (RFC 7636 section 4.1).
    public let verifier: String
    /// BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 section 4.2).
    public var challenge: String { Self.challenge(for: verifier) }
    /// Always "S256"; "plain" is never sent.
    public let method = "S256"

    /// A fresh random verifier.
    public init() {
        verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
    }

    /// A verifier chosen by the caller (known-answer tests).
    public init(verifier: String) {
        self.verifier = verifier
    }

    /// The S256 challenge of `verifier`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Data(verifier.utf8)))
    }
}
