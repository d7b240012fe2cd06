import Foundation

/// A key-service request: a flat JSON object of strings, names in lower case as the protocol has them, in the order
/// of their names: the names and the order `JSONEncoder` with `.sortedKeys` wrote (its escapes differ: `/` is written
/// as is, control characters as `\u00XX`; any JSON parser reads both the same). Written directly: every login sends
/// one, and right after Argon2id, with every cache cold, `JSONEncoder` took about 40 µs of it (issue 23).
struct KeyServiceRequestBody {
    var keyid: String?
    var secret: String?
    var longsecret: String?
    var blinded: String?
    var authkey: String?
    var nonce: String?
    var proof: String?

    /// The JSON object; RFC 8259 section 7: `"`, `\` and the control characters escaped, everything else as its UTF-8.
    var json: Data {
        let fields = [
            ("authkey", authkey), ("blinded", blinded), ("keyid", keyid), ("longsecret", longsecret),
            ("nonce", nonce), ("proof", proof), ("secret", secret),
        ]
        var bytes = Data([UInt8(ascii: "{")])
        bytes.reserveCapacity(256)
        for case let (name, value?) in fields {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            Self.append(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            Self.append(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static func append(_ string: String, to bytes: inout Data) {
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0..<0x20:
                bytes.append(contentsOf: Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
