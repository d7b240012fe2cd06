internal import CSodium
public import Foundation

/// Ed25519 signatures (libsodium's `crypto_sign`), for signing and checking JWTs (EdDSA, RFC 8037).
public struct Ed25519SigningKey: Sendable {
    private let secretKey: SecureBytes
    /// The 32-byte public key.
    public let publicKey: Data

    /// A new random key pair.
    public init() {
        Sodium.ensureReady()
        var publicKey = Data(count: Int(crypto_sign_PUBLICKEYBYTES))
        secretKey = unsafe SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { secret in
            unsafe publicKey.withUnsafeMutableBytes { pub in
                // Key generation has no failure path: libsodium returns 0 for any random seed.
                unsafe Sodium.check(
                    crypto_sign_keypair(
                        pub.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    ),
                    cannotFail: "crypto_sign_keypair"
                )
            }
        }
        self.publicKey = publicKey
    }

    /// The key pair for a 32-byte seed (for a signing key that must survive restarts).
    /// - Throws: ``CryptoError/Code/invalidLength`` when the seed is not 32 bytes.
    public init(seed: SecureBytes) throws(CryptoError) {
        Sodium.ensureReady()
        guard seed.count == Int(crypto_sign_SEEDBYTES) else {
            throw CryptoError(.invalidLength, "an Ed25519 seed is 32 bytes")
        }
        var publicKey = Data(count: Int(crypto_sign_PUBLICKEYBYTES))
        secretKey = unsafe SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { secret in
            unsafe publicKey.withUnsafeMutableBytes { pub in
                unsafe seed.withUnsafeBytes { seedBytes in
                    // Every 32-byte seed is a valid Ed25519 seed: libsodium returns 0 for all of them.
                    unsafe Sodium.check(
                        crypto_sign_seed_keypair(
                            pub.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            secret.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            seedBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        ),
                        cannotFail: "crypto_sign_seed_keypair"
                    )
                }
            }
        }
        self.publicKey = publicKey
    }

    /// The 64-byte detached signature of `message`.
    public func signature(for message: Data) -> Data {
        var signature = Data(count: Int(crypto_sign_BYTES))
        unsafe signature.withUnsafeMutableBytes { sig in
            unsafe message.withUnsafeBytes { msg in
                unsafe secretKey.withUnsafeBytes { secret in
                    // Signing has no failure path: libsodium returns 0 for any message and key.
                    unsafe Sodium.check(
                        crypto_sign_detached(
                            sig.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            nil,
                            msg.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            UInt64(msg.count),
                            secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        ),
                        cannotFail: "crypto_sign_detached"
                    )
                }
            }
        }
        return signature
    }
}
