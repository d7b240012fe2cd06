import Foundation
import VaultCrypto

/// What the child says about a refresh token: keyed BLAKE2b under a key the parent draws for the run and passes
/// on standard input, so the line names which token arrived without carrying anything an issuer would take.
/// The parent computes the same (Tests/CredentialVaultTests/Proof/TokenFingerprint.swift).
enum TokenFingerprint {
    static let domain = "credential-vault/test/token-fingerprint"

    /// The fingerprint of `token` under `key`, in base64url.
    static func of(_ token: String, key: SecureBytes) -> String {
        // A 32-byte key and a 16-byte output are inside keyed BLAKE2b's bounds.
        try! BLAKE2b.keyedHash(key: key, domain: domain, message: Data(token.utf8), outputLength: 16)
            .base64URLEncodedString()
    }
}
