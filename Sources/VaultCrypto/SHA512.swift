internal import CSodium

/// SHA-512 (libsodium's `crypto_hash_sha512`) over parts fed in turn, into a secure buffer: the hash of RFC 9380's
/// `expand_message_xmd` and RFC 9497's `Finalize` in ``OPRF``, whose inputs and outputs are secret.
enum SHA512 {
    /// The digest length: 64 bytes.
    static let digestLength = Int(crypto_hash_sha512_BYTES)

    /// The digest of the parts `feed` passes to its `update` argument, one after another.
    static func hash(_ feed: ((UnsafeRawBufferPointer) -> Void) -> Void) -> SecureBytes {
        Sodium.ensureReady()
        // The state holds the secret parts' traces: it lives in a buffer that is zeroed afterwards.
        let state = UnsafeMutablePointer<crypto_hash_sha512_state>.allocate(capacity: 1)
        defer {
            unsafe sodium_memzero(state, MemoryLayout<crypto_hash_sha512_state>.size)
            unsafe state.deallocate()
        }
        // SHA-512 has no failure path: libsodium returns 0 whatever the input.
        unsafe Sodium.check(crypto_hash_sha512_init(state), cannotFail: "crypto_hash_sha512_init")
        unsafe feed { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            unsafe Sodium.check(
                crypto_hash_sha512_update(state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count)),
                cannotFail: "crypto_hash_sha512_update"
            )
        }
        return unsafe SecureBytes(count: digestLength) { output in
            unsafe Sodium.check(
                crypto_hash_sha512_final(state, output.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                cannotFail: "crypto_hash_sha512_final"
            )
        }
    }
}
