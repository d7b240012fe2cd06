/// Lower-case hexadecimal (RFC 4648 section 8, base16), the one encoder the package's modules share.
///
/// For bytes that are not secret: the text is an ordinary `String`, never zeroed.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lower-case hex digits for each byte of `bytes`, in order.
    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
