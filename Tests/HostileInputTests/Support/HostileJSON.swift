/// Generates JSON documents of the hostile classes a parser's fields meet: the parser's own member names with
/// values of every type, duplicate members (RFC 8259 section 4, RFC 7515 section 5.2), deep nesting, numbers past
/// every range, strings with lone surrogate escapes, control characters and invalid UTF-8.
struct HostileJSON: Sendable {
    /// The member names the parser reads, used most of the time.
    let names: [String]
    /// String values that get past the parser's first checks (URLs of the right shape, base64 keys, ...).
    let strings: [String]

    /// One document: an object most of the time.
    func document(using rng: inout some RandomNumberGenerator) -> [UInt8] {
        var out: [UInt8] = []
        if Int.random(in: 0..<10, using: &rng) == 0 {
            value(into: &out, depth: 0, using: &rng)
        } else {
            object(into: &out, depth: 0, using: &rng)
        }
        return out
    }

    private func object(into out: inout [UInt8], depth: Int, using rng: inout some RandomNumberGenerator) {
        out.append(UInt8(ascii: "{"))
        var names: [String] = []
        for index in 0..<Int.random(in: 0...(depth == 0 ? 8 : 4), using: &rng) {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let name: String
            if !names.isEmpty, Int.random(in: 0..<8, using: &rng) == 0 {
                name = names.randomElement(using: &rng)!
            } else if !self.names.isEmpty, Int.random(in: 0..<4, using: &rng) != 0 {
                name = self.names.randomElement(using: &rng)!
            } else {
                name = String(decoding: HostileBytes.random(0...6, using: &rng).map { $0 % 26 + 97 }, as: UTF8.self)
            }
            names.append(name)
            string(Array(name.utf8), into: &out, using: &rng)
            out.append(UInt8(ascii: ":"))
            value(into: &out, depth: depth + 1, using: &rng)
        }
        out.append(UInt8(ascii: "}"))
    }

    private func value(into out: inout [UInt8], depth: Int, using rng: inout some RandomNumberGenerator) {
        switch Int.random(in: 0..<14, using: &rng) {
        case 0 where depth < 4: object(into: &out, depth: depth, using: &rng)
        case 1 where depth < 4:
            out.append(UInt8(ascii: "["))
            for index in 0..<Int.random(in: 0...4, using: &rng) {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value(into: &out, depth: depth + 1, using: &rng)
            }
            out.append(UInt8(ascii: "]"))
        case 2:
            out += HostileBytes.nested(Array("1".utf8), depth: Int.random(in: 1...600, using: &rng))
        case 3, 4:
            out += Array(Self.numbers.randomElement(using: &rng)!.utf8)
        case 5:
            out += Array(String(Int.random(in: .min ... .max, using: &rng)).utf8)
        case 6:
            out += Array(["true", "false", "null"].randomElement(using: &rng)!.utf8)
        case 7:
            string(HostileBytes.random(0...24, using: &rng), into: &out, using: &rng)
        default:
            let text = strings.isEmpty ? "x" : strings.randomElement(using: &rng)!
            string(Array(text.utf8), into: &out, using: &rng)
        }
    }

    /// `bytes` as a JSON string, escaped as JSON needs, with now and then a hostile escape or raw byte put in.
    private func string(_ bytes: [UInt8], into out: inout [UInt8], using rng: inout some RandomNumberGenerator) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array("\\u00\(byte < 16 ? "0" : "")\(String(byte, radix: 16))".utf8)
            default: out.append(byte)
            }
        }
        if Int.random(in: 0..<6, using: &rng) == 0 {
            out += Self.stringHazards.randomElement(using: &rng)!
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Numbers at and past the edges of Int64, Double and NumericDate.
    static let numbers = [
        "0", "-0", "1", "-1", "3600", "1e999", "-1e999", "1e-999", "1.7976931348623157e308", "4.9e-324",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "253402300799", "253402300800", "0.5", "1E+2", "1e2147483648", "123456789012345678901234567890.5",
        String(repeating: "9", count: 400), "0." + String(repeating: "0", count: 400) + "1",
    ]

    /// Inside a string: lone surrogate escapes, escaped NUL, a raw control character, invalid UTF-8.
    static let stringHazards: [[UInt8]] =
        [
            "\\ud800", "\\udfff", "\\ud800\\ud800", "\\u0000", "\\uZZZZ", "\\q", "\u{01}", "\\",
        ].map { Array($0.utf8) } + [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82]]
}
