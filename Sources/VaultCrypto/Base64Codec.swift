internal import CSodium
import Foundation

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
        // sodium_bin2base64 has no status: it returns the NUL-terminated text it wrote (and aborts,
        // rather than return, when the buffer is too small, which sodium_base64_encoded_len rules out).
        return unsafe output.withUnsafeMutableBufferPointer { out in
            let text = unsafe sodium_bin2base64(
                out.baseAddress!,
                length,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count,
                variant.sodiumValue
            )
            return unsafe String(cString: text!)
        }
    }

    static func decode(_ text: some StringProtocol, variant: Variant) throws(CryptoError) -> Data {
        Sodium.ensureReady()
        let input = Array(text.utf8)
        if input.isEmpty { return Data() }
        let reason = "the text is not canonical \(variant == .original ? "base64" : "base64url")"
        // libsodium reads the text as `char`: a byte from 0x80 up is negative there, and its constant-time compares
        // then take it for '_' or '/' (found against PublicBase64URL). Refused first, over the whole text at once,
        // without a branch on which byte it is.
        guard input.reduce(0, |) & 0x80 == 0 else { throw CryptoError(.invalidEncoding, reason) }
        // libsodium checks the alphabet, the padding and that trailing bits are zero; it stops at
        // the first byte it does not accept, so the whole input must have been consumed as well.
        var output = [UInt8](repeating: 0, count: input.count / 4 * 3 + 3)
        var written = 0
        var consumed = -1
        let status = unsafe input.withUnsafeBufferPointer { inputBuffer in
            unsafe inputBuffer.withMemoryRebound(to: CChar.self) { chars in
                unsafe output.withUnsafeMutableBufferPointer { out in
                    var end: UnsafePointer<CChar>? = nil
                    let status = unsafe sodium_base642bin(
                        out.baseAddress!,
                        out.count,
                        chars.baseAddress!,
                        chars.count,
                        nil,
                        &written,
                        &end,
                        variant.sodiumValue
                    )
                    consumed = unsafe end.map { unsafe chars.baseAddress!.distance(to: $0) } ?? -1
                    return status
                }
            }
        }
        try Sodium.check(status, .invalidEncoding, reason)
        guard consumed == input.count else { throw CryptoError(.invalidEncoding, reason) }
        return Data(output[0..<written])
    }
}
