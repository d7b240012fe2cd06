internal import CSodium
public import Foundation

/// Strict standard base64 (RFC 4648 section 4) with padding, as the key service sends keys.
public enum Base64 {
    /// Encodes `data` with padding.
    public static func encode(_ data: Data) -> String {
        unsafe data.withUnsafeBytes { unsafe Base64Codec.encode($0, variant: .original) }
    }

    /// Decodes padded standard base64.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for anything but the canonical encoding.
    public static func decode(_ text: some StringProtocol) throws(CryptoError) -> Data {
        try Base64Codec.decode(text, variant: .original)
    }
}
