import Foundation

/// application/x-www-form-urlencoded, as RFC 6749 appendix B asks: every UTF-8 byte outside RFC 3986's unreserved
/// set as `%XX` (a space too: `%20`, which form decoders read as a space, as they read `+`).
enum FormEncoding {
    static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }
            .map { "\(escape($0.key))=\(escape($0.value))" }
            .joined(separator: "&")
    }

    /// `value`'s UTF-8 with every byte but `A-Z a-z 0-9 - . _ ~` percent-encoded, byte by byte: a refresh token
    /// or an assertion is kilobytes, and goes out in every refresh.
    static func escape(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.append(byte)
            default:
                escaped.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}
