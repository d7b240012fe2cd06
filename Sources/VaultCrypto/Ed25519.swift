internal import CSodium

public import struct Foundation.Data

/// Ed25519 signatures (libsodium's `crypto_sign`), for signing and checking JWTs (EdDSA, RFC 8037).
public struct Ed25519SigningKey: Sendable {
    private let secretKey: SecureBytes
    /// The 32-byte public key.
    public let publicKey: Data

    /// A new random key pair.
    public init() {
        Sodium.ensureReady()
        var publicKey = Data(count: Int(crypto_sign_PUBLICKEYBYTES))
        secretKey = SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { secret in
            publicKey.withUnsafeMutableBytes { pub in
                _ = crypto_sign_keypair(
                    pub.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
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
        secretKey = SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { secret in
            publicKey.withUnsafeMutableBytes { pub in
                seed.withUnsafeBytes { seedBytes in
                    _ = crypto_sign_seed_keypair(
                        pub.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        secret.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        seedBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    )
                }
            }
        }
        self.publicKey = publicKey
    }

    /// The 64-byte detached signature of `message`.
    public func signature(for message: Data) -> Data {
        var signature = Data(count: Int(crypto_sign_BYTES))
        signature.withUnsafeMutableBytes { sig in
            message.withUnsafeBytes { msg in
                secretKey.withUnsafeBytes { secret in
                    _ = crypto_sign_detached(
                        sig.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        nil,
                        msg.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(msg.count),
                        secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    )
                }
            }
        }
        return signature
    }
}

/// Checking Ed25519 signatures.
public enum Ed25519 {
    /// Whether `signature` is a valid signature of `message` under the 32-byte `publicKey`.
    public static func isValidSignature(_ signature: Data, for message: Data, publicKey: Data) -> Bool {
        Sodium.ensureReady()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else {
            return false
        }
        return signature.withUnsafeBytes { sig in
            message.withUnsafeBytes { msg in
                publicKey.withUnsafeBytes { pub in
                    crypto_sign_verify_detached(
                        sig.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        msg.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt64(msg.count),
                        pub.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    ) == 0
                }
            }
        }
    }
}
