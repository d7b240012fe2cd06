/// Mutations of byte strings toward the known hostile classes, and a printable form of any input.
enum HostileBytes {
    /// Fragments a mutation inserts: JSON structure, the escapes and numbers parsers get wrong (RFC 8259 section
    /// 6 and 8), invalid UTF-8 (overlong, encoded surrogate, cut sequences, bytes never valid), base64 and JWS
    /// separators (RFC 7515), HTTP framing and percent-escapes.
    static let fragments: [[UInt8]] =
        [
            "\"", "\\", "{", "}", "[", "]", ",", ":", ".", "..", "=", "+", "/", "-", "_", " ", "\t",
            "\\u0000", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\uDBFF\\uDFFF", "\\u", "\\x", "\\/",
            "1e999999999", "-1e400", "1E-400", "-0", "0.0000000000000000000000000000000001", "NaN", "Infinity",
            "123456789012345678901234567890123456789", "9223372036854775808", "-9223372036854775809", "1.5e308",
            "true", "false", "null", "{}", "[]", "\"\"", "\":\"", "\",\"",
            "\r\n", "\n\n", "\r\n\r\n", "\r", "%00", "%", "%zz", "%ff%fe", "?", "&", "#", "@", "HTTP/1.1 ",
            "chunked", "Content-Length: ", "Transfer-Encoding: ", "ffffffffffffffff", "-1",
        ].map { Array($0.utf8) } + [
            [0xFF], [0xFE], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xC3],
            [0x00], [0x7F], [0xEF, 0xBB, 0xBF], [0xF0, 0x9F, 0x98, 0x80], [0xCC, 0x81], [0x80],
        ]

    /// The longest input a mutation makes; the size-cap classes come from their own strategy.
    static let mutationLimit = 64 * 1024

    /// `bytes` after one to four random mutations; `others` are spliced in now and then.
    static func mutate(
        _ bytes: [UInt8],
        others: [[UInt8]],
        using rng: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let position = Int.random(in: 0...bytes.count, using: &rng)
            switch Int.random(in: 0..<12, using: &rng) {
            case 0 where !bytes.isEmpty:
                let index = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
            case 1 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 2, 3:
                bytes.insert(contentsOf: fragments.randomElement(using: &rng)!, at: position)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &rng))
                bytes.removeSubrange(min(position, end)..<end)
            case 5:
                bytes.removeSubrange(position...)
            case 6 where !bytes.isEmpty:
                // A chunk repeated: the many-dots and many-members classes, and inputs that grow.
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let chunk = Array(bytes[start..<min(bytes.count, start + Int.random(in: 1...8, using: &rng))])
                let times = Int.random(in: 2...(Int.random(in: 0..<8, using: &rng) == 0 ? 4096 : 8), using: &rng)
                bytes.insert(contentsOf: repeated(chunk, times), at: position)
            case 7:
                let dots = Int.random(in: 1...(Int.random(in: 0..<8, using: &rng) == 0 ? 20_000 : 16), using: &rng)
                bytes.insert(contentsOf: [UInt8](repeating: UInt8(ascii: "."), count: dots), at: position)
            case 8 where !others.isEmpty:
                let other = others.randomElement(using: &rng)!
                let start = Int.random(in: 0...other.count, using: &rng)
                let end = Int.random(in: start...other.count, using: &rng)
                bytes.insert(contentsOf: other[start..<end], at: position)
            case 9:
                bytes = nested(
                    bytes,
                    depth: Int.random(in: 1...(Int.random(in: 0..<4, using: &rng) == 0 ? 700 : 8), using: &rng)
                )
            case 10 where !bytes.isEmpty:
                // A duplicate: the same stretch twice in a row (a member, a header, a segment).
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let end = min(bytes.count, start + Int.random(in: 1...64, using: &rng))
                bytes.insert(contentsOf: bytes[start..<end], at: end)
            default:
                bytes.insert(contentsOf: random(0...8, using: &rng), at: position)
            }
            if bytes.count > mutationLimit { bytes.removeSubrange(mutationLimit...) }
        }
        return bytes
    }

    /// `inner` inside `depth` arrays or objects (deep nesting, RFC 8259 section 9 lets a parser bound it).
    static func nested(_ inner: [UInt8], depth: Int) -> [UInt8] {
        repeated(Array("{\"a\":[".utf8), depth) + inner + repeated(Array("]}".utf8), depth)
    }

    /// Arrays (or objects holding arrays) opened and never closed, the last byte opening the deepest: at and around
    /// the depth limits of the library (64) and of Foundation's scanner (512, which trapped on 513 `[` ending the
    /// input: issue 21), or anywhere up to 20,000 levels.
    static func deepOpen(using rng: inout some RandomNumberGenerator) -> [UInt8] {
        let depth = [63, 64, 65, 511, 512, 513, 514, Int.random(in: 1...20_000, using: &rng)].randomElement(
            using: &rng
        )!
        guard Bool.random(using: &rng) else { return [UInt8](repeating: UInt8(ascii: "["), count: depth) }
        return repeated(Array(#"{"a":["#.utf8), depth / 2) + (depth % 2 == 1 ? [UInt8(ascii: "[")] : [])
    }

    /// `chunk`, `times` times over (built by appending: a lazy `joined()` costs a call per byte in a debug build).
    static func repeated(_ chunk: [UInt8], _ times: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(chunk.count * times)
        for _ in 0..<times { out.append(contentsOf: chunk) }
        return out
    }

    /// Random bytes, `count` of them.
    static func random(_ count: ClosedRange<Int>, using rng: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<Int.random(in: count, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// `bytes` printable on one line: ASCII as is, the rest as `\xNN`, cut after 400 bytes.
    static func describe(_ bytes: [UInt8]) -> String {
        var text = "\(bytes.count) bytes: \""
        for byte in bytes.prefix(400) {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): text += "\\" + String(UnicodeScalar(byte))
            case 0x20..<0x7F: text.unicodeScalars.append(UnicodeScalar(byte))
            default: text += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text + (bytes.count > 400 ? "\"…" : "\"")
    }
}
