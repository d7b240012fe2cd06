internal import CSodium
public import Foundation

/// Strict base64url (RFC 7515 section 2): the URL-safe alphabet, no padding, no whitespace,
/// and no non-zero trailing bits, so every byte string has exactly one accepted encoding.
///
/// libsodium's constant-time code, for secrets (keys, their text on the wire, a JWT's signature); inside this package,
/// bytes that are not secret take `PublicBase64URL`, which accepts and refuses the same texts faster.
public enum Base64URL {
    /// Encodes `data` without padding.
    public static func encode(_ data: Data) -> String {
        unsafe data.withUnsafeBytes { unsafe Base64Codec.encode($0, variant: .urlSafeNoPadding) }
    }

    /// Decodes unpadded base64url.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for padding, the standard alphabet's `+` or `/`,
    ///   whitespace, a length of 1 mod 4, or non-zero trailing bits.
    public static func decode(_ text: some StringProtocol) throws(CryptoError) -> Data {
        try Base64Codec.decode(text, variant: .urlSafeNoPadding)
    }
}
