internal import CSodium
public import Foundation

/// The OPRF mode of RFC 9497 (mode `0x00`) over ristretto255 with SHA-512, on libsodium's ristretto255.
///
/// The client blinds its input, the server multiplies the blinded element by its key, the client unblinds and
/// hashes: the client learns `F(key, input)` and the server learns nothing about the input, not even whether two
/// requests carried the same one. Checked against every OPRF-mode vector of RFC 9497 appendix A.1.1.
///
/// Every element that arrives from outside is deserialized as the RFC requires: a canonical encoding of a point
/// of the group, never the identity (``CryptoError/Code/invalidElement`` otherwise).
public enum OPRF {
    /// A serialized element: 32 bytes (`Ne`).
    public static let elementLength = Int(crypto_core_ristretto255_BYTES)
    /// A serialized scalar: 32 bytes (`Ns`).
    public static let scalarLength = Int(crypto_core_ristretto255_SCALARBYTES)
    /// The output of ``finalize(_:blinding:evaluatedElement:)``: 64 bytes (`Nh`).
    public static let outputLength = SHA512.digestLength

    /// `"OPRFV1-" || I2OSP(0x00, 1) || "-" || "ristretto255-SHA512"` (RFC 9497 section 3.1).
    static let contextString: [UInt8] = Array("OPRFV1-".utf8) + [0] + Array("-ristretto255-SHA512".utf8)

    /// A random non-zero scalar: a server's OPRF key.
    public static func generateKey() -> SecureBytes {
        Sodium.ensureReady()
        // crypto_core_ristretto255_scalar_random never returns zero.
        return unsafe SecureBytes(count: scalarLength) { output in
            unsafe crypto_core_ristretto255_scalar_random(output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// RFC 9497 section 3.2.1, `DeriveKeyPair`: the private key for `seed` and `info` (as the test vectors make it).
    /// - Throws: ``CryptoError/Code/invalidLength`` for an `info` over 65,535 bytes; ``CryptoError/Code/keyDerivationFailed``
    ///   if 256 counters all give zero (the RFC's DeriveKeyPairError, which does not happen in practice).
    public static func deriveKey(
        seed: some ContiguousBytes,
        info: some ContiguousBytes
    ) throws(CryptoError) -> SecureBytes {
        let seedBytes = unsafe seed.withUnsafeBytes { unsafe [UInt8]($0) }
        let infoBytes = unsafe info.withUnsafeBytes { unsafe [UInt8]($0) }
        guard infoBytes.count <= 65_535 else { throw CryptoError(.invalidLength, "an OPRF key info over 65,535 bytes") }
        let domain = Array("DeriveKeyPair".utf8) + contextString
        let deriveInput = seedBytes + [UInt8(infoBytes.count >> 8), UInt8(infoBytes.count & 0xff)] + infoBytes
        for counter in 0...255 {
            let message = deriveInput + [UInt8(counter)]
            let key = try unsafe message.withUnsafeBytes { bytes in
                Result { () throws(CryptoError) in try unsafe hashToScalar(bytes, domain: domain) }
            }.get()
            if !isZero(key) { return key }
        }
        throw CryptoError(.keyDerivationFailed, "DeriveKeyPair found no non-zero scalar")
    }

    /// The client's first step (`Blind`): a random blind and the blinded element to send.
    /// - Throws: ``CryptoError/Code/invalidElement`` if `input` hashes to the identity (RFC 9497's
    ///   InvalidInputError; negligibly likely).
    public static func blind(_ input: SecureBytes) throws(CryptoError) -> OPRFBlinding {
        try blind(input, blind: generateKey())
    }

    /// `Blind` with a given blind scalar: for known-answer tests only.
    static func blind(_ input: SecureBytes, blind: SecureBytes) throws(CryptoError) -> OPRFBlinding {
        let element = try unsafe input.withUnsafeBytes { bytes throws(CryptoError) in try unsafe hashToGroup(bytes) }
        let blinded = try multiply(scalar: blind, element: element.copyToData())
        return OPRFBlinding(blind: blind, blindedElement: blinded)
    }

    /// The server's step (`BlindEvaluate`): `key * blindedElement`.
    /// - Throws: ``CryptoError/Code/invalidElement`` for an element that is not a valid, non-identity encoding;
    ///   ``CryptoError/Code/invalidLength`` for a key that is not 32 bytes.
    public static func blindEvaluate(key: SecureBytes, blindedElement: Data) throws(CryptoError) -> Data {
        guard key.count == scalarLength else { throw CryptoError(.invalidLength, "an OPRF key must be 32 bytes") }
        try requireValid(blindedElement, "the blinded element")
        return try multiply(scalar: key, element: blindedElement)
    }

    /// The client's last step (`Finalize`): unblinds `evaluatedElement` and hashes it with `input` into the
    /// 64-byte output, `F(key, input)`.
    /// - Throws: ``CryptoError/Code/invalidElement`` for an evaluated element that is not a valid, non-identity
    ///   encoding.
    public static func finalize(
        _ input: SecureBytes,
        blinding: OPRFBlinding,
        evaluatedElement: Data
    ) throws(CryptoError) -> SecureBytes {
        try requireValid(evaluatedElement, "the evaluated element")
        guard input.count <= 65_535 else { throw CryptoError(.invalidLength, "an OPRF input over 65,535 bytes") }
        let inverse = try unsafe SecureBytes(count: scalarLength) { output throws(CryptoError) in
            let status = unsafe blinding.blind.withUnsafeBytes { blind in
                unsafe crypto_core_ristretto255_scalar_invert(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    blind.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
            try Sodium.check(status, .invalidLength, "the blind is zero")
        }
        // The unblinded element is F's secret core: it stays in a secure buffer.
        let unblinded = try unsafe SecureBytes(count: elementLength) { output throws(CryptoError) in
            try Sodium.check(
                unsafe multiply(scalar: inverse, element: evaluatedElement, into: output),
                .invalidElement,
                "the unblinded element is the identity"
            )
        }
        let elementLengthBytes: [UInt8] = [0, UInt8(elementLength)]
        let inputLengthBytes = [UInt8(input.count >> 8), UInt8(input.count & 0xff)]
        // Hash(I2OSP(len(input), 2) || input || I2OSP(len(unblindedElement), 2) || unblindedElement || "Finalize")
        return unsafe SHA512.hash { update in
            unsafe inputLengthBytes.withUnsafeBytes { unsafe update($0) }
            unsafe input.withUnsafeBytes { unsafe update($0) }
            unsafe elementLengthBytes.withUnsafeBytes { unsafe update($0) }
            unsafe unblinded.withUnsafeBytes { unsafe update($0) }
            unsafe Array("Finalize".utf8).withUnsafeBytes { unsafe update($0) }
        }
    }

    /// Whether `element` is a canonical encoding of a ristretto255 point other than the identity: what the RFC's
    /// DeserializeElement accepts. Cheap: a server checks it before counting an attempt.
    public static func isValidElement(_ element: Data) -> Bool {
        Sodium.ensureReady()
        guard element.count == elementLength else { return false }
        return unsafe element.withUnsafeBytes { bytes in
            let pointer = unsafe bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            // libsodium refuses non-canonical encodings and non-points, but takes the identity, whose one canonical
            // encoding is 32 zero bytes (RFC 9496 section 4.3.2): refused here.
            return unsafe crypto_core_ristretto255_is_valid_point(pointer) == 1 && sodium_is_zero(pointer, 32) == 0
        }
    }

    /// RFC 9497's HashToGroup: ristretto255's one-way map of 64 bytes of `expand_message_xmd`.
    static func hashToGroup(_ message: UnsafeRawBufferPointer) throws(CryptoError) -> SecureBytes {
        let uniform = try unsafe ExpandMessageXMD.sha512(
            message: message,
            domain: Array("HashToGroup-".utf8) + contextString,
            length: 64
        )
        let element = unsafe SecureBytes(count: elementLength) { output in
            unsafe uniform.withUnsafeBytes { bytes in
                // The map has no failure path: libsodium returns 0 for any 64 bytes.
                unsafe Sodium.check(
                    crypto_core_ristretto255_from_hash(
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    ),
                    cannotFail: "crypto_core_ristretto255_from_hash"
                )
            }
        }
        guard !isZero(element) else { throw CryptoError(.invalidElement, "the input hashes to the identity") }
        return element
    }

    /// RFC 9497's HashToScalar under `domain`: 64 bytes of `expand_message_xmd`, reduced modulo the group order.
    static func hashToScalar(_ message: UnsafeRawBufferPointer, domain: [UInt8]) throws(CryptoError) -> SecureBytes {
        let uniform = try unsafe ExpandMessageXMD.sha512(message: message, domain: domain, length: 64)
        return unsafe SecureBytes(count: scalarLength) { output in
            unsafe uniform.withUnsafeBytes { bytes in
                unsafe crypto_core_ristretto255_scalar_reduce(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
    }

    private static func requireValid(_ element: Data, _ name: String) throws(CryptoError) {
        guard isValidElement(element) else {
            throw CryptoError(.invalidElement, "\(name) is not a valid ristretto255 element")
        }
    }

    /// `scalar * element` as a new element (not secret: a blinded or evaluated element).
    private static func multiply(scalar: SecureBytes, element: Data) throws(CryptoError) -> Data {
        guard scalar.count == scalarLength, element.count == elementLength else {
            throw CryptoError(.invalidLength, "a scalar and an element are 32 bytes each")
        }
        var result = Data(count: elementLength)
        let status = unsafe result.withUnsafeMutableBytes { output in
            unsafe multiply(scalar: scalar, element: element, into: output)
        }
        try Sodium.check(status, .invalidElement, "the product is the identity")
        return result
    }

    /// `scalar * element` into `output`: libsodium's status, -1 for a product that is the identity (a zero scalar).
    /// The caller has checked both lengths (32 bytes).
    private static func multiply(
        scalar: SecureBytes,
        element: Data,
        into output: UnsafeMutableRawBufferPointer
    ) -> Int32 {
        precondition(
            scalar.count == scalarLength && element.count == elementLength,
            "a scalar and an element are 32 bytes"
        )
        return unsafe scalar.withUnsafeBytes { scalarBytes in
            unsafe element.withUnsafeBytes { elementBytes in
                unsafe crypto_scalarmult_ristretto255(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    scalarBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    elementBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
    }

    private static func isZero(_ bytes: SecureBytes) -> Bool {
        unsafe bytes.withUnsafeBytes { buffer in
            unsafe sodium_is_zero(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
        }
    }
}
