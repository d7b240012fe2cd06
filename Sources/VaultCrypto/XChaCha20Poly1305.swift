internal import CSodium
public import Foundation

/// XChaCha20-Poly1305 authenticated encryption with associated data (IETF construction,
/// libsodium's `crypto_aead_xchacha20poly1305_ietf`).
///
/// Nonces are 24 random bytes, large enough that random nonces never repeat in practice,
/// so callers never manage counters.
public enum XChaCha20Poly1305 {
    /// Key length: 32 bytes.
    public static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    /// Nonce length: 24 bytes.
    public static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    /// Authentication tag length: 16 bytes.
    public static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// A nonce and the ciphertext with its tag appended.
    public struct SealedBox: Hashable, Sendable {
        /// The 24-byte nonce.
        public let nonce: Data
        /// The ciphertext followed by the 16-byte Poly1305 tag.
        public let ciphertext: Data

        /// A box read back from storage; nothing is checked until it is opened.
        public init(nonce: Data, ciphertext: Data) {
            self.nonce = nonce
            self.ciphertext = ciphertext
        }
    }

    /// A fresh 32-byte random key.
    public static func generateKey() -> SecureBytes {
        SecureBytes.random(count: keyLength)
    }

    /// Encrypts and authenticates `plaintext`, and authenticates `associatedData`, under a new random nonce.
    /// - Throws: ``CryptoError/Code/invalidLength`` when the key is not 32 bytes.
    public static func seal(
        _ plaintext: SecureBytes,
        key: SecureBytes,
        associatedData: Data = Data()
    ) throws(CryptoError) -> SealedBox {
        try seal(plaintext, key: key, nonce: SecureRandom.bytes(count: nonceLength), associatedData: associatedData)
    }

    /// Sealing with a caller-chosen nonce exists for known-answer tests only.
    static func seal(
        _ plaintext: SecureBytes,
        key: SecureBytes,
        nonce: Data,
        associatedData: Data
    ) throws(CryptoError) -> SealedBox {
        Sodium.ensureReady()
        guard key.count == keyLength else { throw CryptoError(.invalidLength, "an XChaCha20-Poly1305 key is 32 bytes") }
        guard nonce.count == nonceLength else {
            throw CryptoError(.invalidLength, "an XChaCha20-Poly1305 nonce is 24 bytes")
        }
        var ciphertext = Data(count: plaintext.count + tagLength)
        var written: UInt64 = 0
        let status = unsafe ciphertext.withUnsafeMutableBytes { out in
            unsafe plaintext.withUnsafeBytes { message in
                unsafe key.withUnsafeBytes { keyBytes in
                    unsafe nonce.withUnsafeBytes { nonceBytes in
                        unsafe associatedData.withUnsafeBytes { ad in
                            unsafe crypto_aead_xchacha20poly1305_ietf_encrypt(
                                out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                &written,
                                message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                UInt64(message.count),
                                ad.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                UInt64(ad.count),
                                nil,
                                nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                            )
                        }
                    }
                }
            }
        }
        // Sealing has one refusal in libsodium: a message over crypto_aead_xchacha20poly1305_ietf_MESSAGEBYTES_MAX.
        try Sodium.check(status, .invalidLength, "the plaintext is too long for XChaCha20-Poly1305")
        return SealedBox(nonce: nonce, ciphertext: ciphertext)
    }

    /// Checks the tag and decrypts. Nothing is returned unless every byte of the nonce,
    /// ciphertext, tag and associated data is exactly as sealed.
    /// - Throws: ``CryptoError/Code/authenticationFailed`` on any change or a wrong key;
    ///   ``CryptoError/Code/invalidLength`` for a key, nonce or box of impossible length.
    public static func open(
        _ box: SealedBox,
        key: SecureBytes,
        associatedData: Data = Data()
    ) throws(CryptoError) -> SecureBytes {
        Sodium.ensureReady()
        guard key.count == keyLength else { throw CryptoError(.invalidLength, "an XChaCha20-Poly1305 key is 32 bytes") }
        guard box.nonce.count == nonceLength, box.ciphertext.count >= tagLength else {
            throw CryptoError(.authenticationFailed, "the sealed data is truncated or was not made by this vault")
        }
        // The plaintext is written straight into a secure buffer; on failure libsodium writes nothing
        // and the buffer is released (zeroed) without being returned.
        let plaintext = try unsafe SecureBytes(count: box.ciphertext.count - tagLength) { out throws(CryptoError) in
            var written: UInt64 = 0
            let status = unsafe box.ciphertext.withUnsafeBytes { cipher in
                unsafe key.withUnsafeBytes { keyBytes in
                    unsafe box.nonce.withUnsafeBytes { nonceBytes in
                        unsafe associatedData.withUnsafeBytes { ad in
                            unsafe crypto_aead_xchacha20poly1305_ietf_decrypt(
                                out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                &written,
                                nil,
                                cipher.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                UInt64(cipher.count),
                                ad.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                UInt64(ad.count),
                                nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                            )
                        }
                    }
                }
            }
            try Sodium.check(
                status,
                .authenticationFailed,
                "the sealed data failed authentication: wrong key, or it was changed"
            )
        }
        return plaintext
    }
}
