import Foundation
import VaultCrypto

/// The fingerprint `vault-proof-child` prints for a refresh token it received (Tests/ProofChild/TokenFingerprint.swift):
/// keyed BLAKE2b under a key drawn for the run, so the test can tell which token the envelope holds without any
/// token appearing in the child's output.
struct TokenFingerprint {
    static let domain = "credential-vault/test/token-fingerprint"
    let key = SecureBytes.random(count: 32)

    /// The key, for the child's standard input.
    var keyLine: String { key.base64EncodedString() }

    /// The fingerprint of `token`, as the child prints it.
    func of(_ token: String) -> String {
        // A 32-byte key and a 16-byte output are inside keyed BLAKE2b's bounds.
        try! BLAKE2b.keyedHash(key: key, domain: Self.domain, message: Data(token.utf8), outputLength: 16)
            .base64URLEncodedString()
    }
}
