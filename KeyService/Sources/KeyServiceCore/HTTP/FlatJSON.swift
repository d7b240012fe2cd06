import Foundation
import NIOCore

/// Flat JSON objects of string values, the shape of every key-service body, written and read without
/// `JSONEncoder` and `JSONDecoder`: under load the coders cost more than all the rest of a request's own work.
///
/// The reader is a fast path only: it answers nil for anything but the plainest object (an escape, a value that is
/// not a string, a repeated name, bytes that are not UTF-8), and the caller then hands the body to `JSONDecoder`,
/// which decides. So what is accepted and refused stays `JSONDecoder`'s.
enum FlatJSON {
    /// `{"name":"value",...}` with the fields in the order given, escaped as `JSONEncoder` escapes them (no slash
    /// escaped, as with `.withoutEscapingSlashes`).
    static func object(_ fields: KeyValuePairs<String, String>) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(
            capacity: fields.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 }
        )
        buffer.writeInteger(UInt8(ascii: "{"))
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            writeString(field.key, to: &buffer)
            buffer.writeInteger(UInt8(ascii: ":"))
            writeString(field.value, to: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }

    private static func writeString(_ string: String, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        // The common case (base64 and key ids): nothing to escape, one copy.
        guard string.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else {
            buffer.writeString(string)
            buffer.writeInteger(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case 0x08: buffer.writeStaticString("\\b")
            case 0x0C: buffer.writeStaticString("\\f")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            case 0x00..<0x20:
                buffer.writeStaticString("\\u00")
                buffer.writeInteger(hexDigit(byte >> 4))
                buffer.writeInteger(hexDigit(byte & 0x0F))
            default: buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The fields of `body` when it is a plain flat object of strings with no escape in it; nil for anything else,
    /// valid JSON or not (the caller then asks `JSONDecoder`).
    static func plainStrings(in body: Data) -> [String: String]? {
        body.withUnsafeBytes { bytes -> [String: String]? in
            var reader = Reader(bytes: bytes)
            return reader.object()
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        mutating func object() -> [String: String]? {
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var fields: [String: String] = [:]
            skipWhitespace()
            if !take(UInt8(ascii: "}")) {
                while true {
                    skipWhitespace()
                    guard let name = string() else { return nil }
                    skipWhitespace()
                    guard take(UInt8(ascii: ":")) else { return nil }
                    skipWhitespace()
                    guard let value = string(), fields.updateValue(value, forKey: name) == nil else { return nil }
                    skipWhitespace()
                    if take(UInt8(ascii: ",")) { continue }
                    guard take(UInt8(ascii: "}")) else { return nil }
                    break
                }
            }
            skipWhitespace()
            return index == bytes.count ? fields : nil
        }

        /// A string with no escape and no control character in it, valid UTF-8.
        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                guard byte != UInt8(ascii: "\\"), byte >= 0x20 else { return nil }
                index += 1
            }
            return nil
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
                default: return
                }
            }
        }
    }
}
