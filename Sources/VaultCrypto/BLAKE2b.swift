internal import CSodium
public import Foundation

/// Keyed BLAKE2b (libsodium's `crypto_generichash`), used to derive keys and to keep verifiers.
public enum BLAKE2b {
    /// The smallest key length accepted (16 bytes).
    public static let minimumKeyLength = Int(crypto_generichash_KEYBYTES_MIN)
    /// The largest key length accepted (64 bytes).
    public static let maximumKeyLength = Int(crypto_generichash_KEYBYTES_MAX)

    /// BLAKE2b keyed with `key` over `domain`'s UTF-8 bytes followed by `message`.
    ///
    /// The domain string separates uses of one key (for example `"credential-vault/v1/data-key"`).
    /// - Parameters:
    ///   - key: 16 to 64 bytes (``minimumKeyLength`` to ``maximumKeyLength``).
    ///   - domain: the use, hashed before `message`.
    ///   - message: the secret input.
    ///   - outputLength: 16 to 64 bytes; 32 by default.
    /// - Returns: the hash, `outputLength` bytes, zeroed when released.
    /// - Throws: ``CryptoError/Code/invalidLength`` for a key or output length out of range.
    public static func keyedHash(
        key: SecureBytes,
        domain: String,
        message: SecureBytes,
        outputLength: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        try unsafe keyedHash(key: key, domain: domain, outputLength: outputLength) { update in
            unsafe message.withUnsafeBytes { unsafe update($0) }
        }
    }

    /// BLAKE2b keyed with `key` over `domain`'s UTF-8 bytes followed by `message` (not secret).
    public static func keyedHash(
        key: SecureBytes,
        domain: String,
        message: Data,
        outputLength: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        try unsafe keyedHash(key: key, domain: domain, outputLength: outputLength) { update in
            unsafe message.withUnsafeBytes { unsafe update($0) }
        }
    }

    /// BLAKE2b keyed with `key` over `domain`'s UTF-8 bytes followed by `message`, into an ordinary array.
    ///
    /// For outputs that are stored or compared anyway, such as a server's verifiers: no page is locked and
    /// unlocked per call, which under load costs more than the hash. The key stays a ``SecureBytes``; zero the
    /// output yourself if it is a secret.
    /// - Throws: ``CryptoError/Code/invalidLength`` for a key or output length out of range.
    public static func keyedHashBytes(
        key: SecureBytes,
        domain: String,
        message: some ContiguousBytes,
        outputLength: Int = 32
    ) throws(CryptoError) -> [UInt8] {
        try checkLengths(key: key, outputLength: outputLength)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: outputLength, alignment: 1)
        defer {
            // The caller's copy is theirs to zero; this one is ours.
            unsafe sodium_memzero(output.baseAddress!, outputLength)
            unsafe output.deallocate()
        }
        try unsafe hash(key: key, domain: domain, into: output) { update in
            unsafe message.withUnsafeBytes { unsafe update($0) }
        }
        return unsafe [UInt8](output)
    }

    private static func keyedHash(
        key: SecureBytes,
        domain: String,
        outputLength: Int,
        feed: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) throws(CryptoError) -> SecureBytes {
        try checkLengths(key: key, outputLength: outputLength)
        return try unsafe SecureBytes(count: outputLength) { output throws(CryptoError) in
            try unsafe hash(key: key, domain: domain, into: output, feed: feed)
        }
    }

    private static func checkLengths(key: SecureBytes, outputLength: Int) throws(CryptoError) {
        Sodium.ensureReady()
        guard (minimumKeyLength...maximumKeyLength).contains(key.count) else {
            throw CryptoError(.invalidLength, "a BLAKE2b key must be 16 to 64 bytes")
        }
        guard (Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(outputLength) else {
            throw CryptoError(.invalidLength, "a BLAKE2b output must be 16 to 64 bytes")
        }
    }

    /// Hashes into `output`, whose length ``checkLengths(key:outputLength:)`` has checked.
    private static func hash(
        key: SecureBytes,
        domain: String,
        into output: UnsafeMutableRawBufferPointer,
        feed: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) throws(CryptoError) {
        // The state holds key material: it lives in a buffer that is zeroed afterwards.
        let stateSize = crypto_generichash_statebytes()
        let state = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 64)
        defer {
            unsafe sodium_memzero(state, stateSize)
            unsafe state.deallocate()
        }
        // The state struct is 64-byte aligned in C and imports as an opaque pointer.
        let typed = OpaquePointer(state)
        // libsodium fails init and final only for key and output lengths, both checked by the caller.
        let started = unsafe key.withUnsafeBytes { keyBytes in
            unsafe crypto_generichash_init(
                typed,
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                keyBytes.count,
                output.count
            )
        }
        try Sodium.check(started, .invalidLength, "BLAKE2b refused a \(key.count)-byte key")
        unsafe Array(domain.utf8).withUnsafeBytes { unsafe update(typed, $0) }
        unsafe feed { unsafe update(typed, $0) }
        let finished = unsafe crypto_generichash_final(
            typed,
            output.baseAddress!.assumingMemoryBound(to: UInt8.self),
            output.count
        )
        try Sodium.check(finished, .invalidLength, "BLAKE2b refused a \(output.count)-byte output")
    }

    private static func update(_ state: OpaquePointer, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // BLAKE2b's update has no failure path: libsodium returns 0 whatever the input.
        unsafe Sodium.check(
            crypto_generichash_update(state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count)),
            cannotFail: "crypto_generichash_update"
        )
    }
}
