/// RFC 9380 section 5.3.1, `expand_message_xmd` with SHA-512: uniform bytes from a message and a domain
/// separation tag, the first step of ``OPRF``'s HashToGroup and HashToScalar.
enum ExpandMessageXMD {
    /// SHA-512's input block: 128 bytes (`s_in_bytes`).
    private static let blockLength = 128

    /// `length` uniform bytes from `message` under `domain` (the DST).
    /// - Throws: ``CryptoError/Code/invalidLength`` for a DST over 255 bytes, or a length over 255 digests or
    ///   65,535 bytes, as the RFC aborts.
    static func sha512(
        message: UnsafeRawBufferPointer,
        domain: [UInt8],
        length: Int
    ) throws(CryptoError) -> SecureBytes {
        let digest = SHA512.digestLength
        let blocks = (length + digest - 1) / digest
        guard domain.count <= 255, length > 0, length <= 65_535, blocks <= 255 else {
            throw CryptoError(.invalidLength, "expand_message_xmd cannot make \(length) bytes under this DST")
        }
        let domainPrime = domain + [UInt8(domain.count)]
        let lengthBytes = [UInt8(length >> 8), UInt8(length & 0xff)]
        let zeroPad = [UInt8](repeating: 0, count: blockLength)
        // b_0 = H(Z_pad || msg || l_i_b_str || I2OSP(0, 1) || DST_prime)
        let first = unsafe SHA512.hash { update in
            unsafe zeroPad.withUnsafeBytes { unsafe update($0) }
            unsafe update(message)
            unsafe (lengthBytes + [0] + domainPrime).withUnsafeBytes { unsafe update($0) }
        }
        return unsafe SecureBytes(count: length) { output in
            var previous: SecureBytes? = nil
            for index in 1...blocks {
                // b_1 = H(b_0 || I2OSP(1, 1) || DST_prime); b_i = H(strxor(b_0, b_(i-1)) || I2OSP(i, 1) || DST_prime)
                let chained = previous.map { Self.xor(first, $0) } ?? first
                let block = unsafe SHA512.hash { update in
                    unsafe chained.withUnsafeBytes { unsafe update($0) }
                    unsafe ([UInt8(index)] + domainPrime).withUnsafeBytes { unsafe update($0) }
                }
                let start = (index - 1) * digest
                let count = min(digest, length - start)
                unsafe block.withUnsafeBytes { bytes in
                    unsafe UnsafeMutableRawBufferPointer(rebasing: output[start..<(start + count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                }
                previous = block
            }
        }
    }

    /// The byte-wise XOR of two buffers of equal length, itself secret.
    private static func xor(_ lhs: SecureBytes, _ rhs: SecureBytes) -> SecureBytes {
        unsafe SecureBytes(count: lhs.count) { output in
            unsafe lhs.withUnsafeBytes { left in
                unsafe rhs.withUnsafeBytes { right in
                    for index in 0..<left.count { unsafe output[index] = left[index] ^ right[index] }
                }
            }
        }
    }
}
