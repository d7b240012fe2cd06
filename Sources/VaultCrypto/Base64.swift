internal import CSodium

public import struct Foundation.Data

/// Strict base64url (RFC 7515 section 2): the URL-safe alphabet, no padding, no whitespace,
/// and no non-zero trailing bits, so every byte string has exactly one accepted encoding.
public enum Base64URL {
    /// Encodes `data` without padding.
    public static func encode(_ data: Data) -> String {
        data.withUnsafeBytes { Base64Codec.encode($0, variant: .urlSafeNoPadding) }
    }

    /// Decodes unpadded base64url.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for padding, the standard alphabet's `+` or `/`,
    ///   whitespace, a length of 1 mod 4, or non-zero trailing bits.
    public static func decode(_ text: some StringProtocol) throws(CryptoError) -> Data {
        try Base64Codec.decode(text, variant: .urlSafeNoPadding)
    }
}

/// Strict standard base64 (RFC 4648 section 4) with padding, as the key service sends keys.
public enum Base64 {
    /// Encodes `data` with padding.
    public static func encode(_ data: Data) -> String {
        data.withUnsafeBytes { Base64Codec.encode($0, variant: .original) }
    }

    /// Decodes padded standard base64.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for anything but the canonical encoding.
    public static func decode(_ text: some StringProtocol) throws(CryptoError) -> Data {
        try Base64Codec.decode(text, variant: .original)
    }
}

enum Base64Codec {
    enum Variant {
        case original
        case urlSafeNoPadding

        var sodiumValue: Int32 {
            switch self {
            case .original: sodium_base64_VARIANT_ORIGINAL
            case .urlSafeNoPadding: sodium_base64_VARIANT_URLSAFE_NO_PADDING
            }
        }
    }

    static func encode(_ bytes: UnsafeRawBufferPointer, variant: Variant) -> String {
        Sodium.ensureReady()
        let length = sodium_base64_encoded_len(bytes.count, variant.sodiumValue)
        var output = [CChar](repeating: 0, count: length)
        output.withUnsafeMutableBufferPointer { out in
            _ = sodium_bin2base64(
                out.baseAddress!,
                length,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count,
                variant.sodiumValue
            )
        }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func decode(_ text: some StringProtocol, variant: Variant) throws(CryptoError) -> Data {
        Sodium.ensureReady()
        let input = Array(text.utf8)
        if input.isEmpty { return Data() }
        // libsodium checks the alphabet, the padding and that trailing bits are zero; it stops at
        // the first byte it does not accept, so the whole input must have been consumed as well.
        var output = [UInt8](repeating: 0, count: input.count / 4 * 3 + 3)
        var written = 0
        var end: UnsafePointer<CChar>? = nil
        let status = input.withUnsafeBufferPointer { inputBuffer in
            inputBuffer.withMemoryRebound(to: CChar.self) { chars in
                output.withUnsafeMutableBufferPointer { out in
                    let result = sodium_base642bin(
                        out.baseAddress!,
                        out.count,
                        chars.baseAddress!,
                        chars.count,
                        nil,
                        &written,
                        &end,
                        variant.sodiumValue
                    )
                    let consumed = end.map { chars.baseAddress!.distance(to: $0) } ?? -1
                    return result == 0 && consumed == chars.count ? Int32(0) : Int32(-1)
                }
            }
        }
        guard status == 0 else {
            throw CryptoError(
                .invalidEncoding,
                "the text is not canonical \(variant == .original ? "base64" : "base64url")"
            )
        }
        return Data(output[0..<written])
    }
}
