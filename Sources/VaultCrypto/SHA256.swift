internal import CSodium
public import Foundation

/// SHA-256 (libsodium's `crypto_hash_sha256`), for PKCE's S256 method (RFC 7636).
public enum SHA256 {
    /// The 32-byte SHA-256 digest of `data`.
    public static func hash(_ data: Data) -> Data {
        Sodium.ensureReady()
        var digest = Data(count: Int(crypto_hash_sha256_BYTES))
        unsafe digest.withUnsafeMutableBytes { out in
            unsafe data.withUnsafeBytes { input in
                // SHA-256 has no failure path: libsodium returns 0 whatever the input.
                unsafe Sodium.check(
                    crypto_hash_sha256(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(input.count)
                    ),
                    cannotFail: "crypto_hash_sha256"
                )
            }
        }
        return digest
    }
}
