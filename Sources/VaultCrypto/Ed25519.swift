internal import CSodium
public import Foundation

/// Checking Ed25519 signatures.
public enum Ed25519 {
    /// Whether `signature` is a valid signature of `message` under the 32-byte `publicKey`.
    public static func isValidSignature(_ signature: Data, for message: Data, publicKey: Data) -> Bool {
        Sodium.ensureReady()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else {
            return false
        }
        return unsafe signature.withUnsafeBytes { sig in
            unsafe message.withUnsafeBytes { msg in
                unsafe publicKey.withUnsafeBytes { pub in
                    // -1 is the answer "not valid", not an error: it is returned, not thrown.
                    unsafe crypto_sign_verify_detached(
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
