/// A strict RFC 8259 parser for JWT headers and claims sets.
///
/// Foundation's `JSONSerialization` and `JSONDecoder` silently keep one of two members with the
/// same name, so two readers of one token can see different claims; this parser rejects that at
/// every depth instead. It also bounds nesting, keeps numbers finite and refuses lone surrogates.
struct StrictJSONParser {
    /// Why the bytes are not acceptable JSON.
    enum Failure: Error, Equatable {
        case invalidUTF8
        case invalid(String)
        case duplicateMember
        case tooDeep
    }

    /// The deepest nesting of objects and arrays accepted; the top-level object counts as 1. The rule of every
    /// JSON the library reads: ``UntrustedJSON/maximumDepth``.
    static let maximumDepth = UntrustedJSON.maximumDepth

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses exactly one JSON value, with optional whitespace around it, from UTF-8 bytes: as a ``JSONValue``
    /// by default, or as an ``ExactJSONValue`` that keeps each number as written.
    static func parse<Value: StrictJSONTree>(
        _ bytes: [UInt8],
        as type: Value.Type = JSONValue.self
    ) throws(Failure) -> Value {
        // Validating up front means string contents below can be decoded without repair.
        guard isValidUTF8(bytes) else { throw .invalidUTF8 }
        var parser = StrictJSONParser(bytes)
        let value: Value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw .invalid("there is more text after the JSON value") }
        return value
    }

    /// Strict UTF-8 (no overlong forms, no encoded surrogates, nothing past U+10FFFF). Written out
    /// because `String(validating:as:)` needs macOS 15 and the package supports macOS 14.
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        // ASCII is UTF-8 as it stands, and most JSON is ASCII: a plain pass first, the decoder only past it.
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        guard current == byte else { throw .invalid("expected \(what)") }
        index += 1
    }

    private mutating func parseValue<Value: StrictJSONTree>() throws(Failure) -> Value {
        skipWhitespace()
        guard let byte = current else { throw .invalid("the text ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let number = Value(numberLiteral: try parseNumber()) else {
                throw .invalid("a number is too large for a Double")
            }
            return number
        default:
            throw .invalid("a value cannot start with this character")
        }
    }

    private mutating func enterContainer() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw .tooDeep }
        index += 1
    }

    private mutating func parseObject<Value: StrictJSONTree>() throws(Failure) -> Value {
        try enterContainer()
        defer { depth -= 1 }
        var members: [String: Value] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw .invalid("expected a member name in quotes") }
            let name = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "a colon after a member name")
            let value: Value = try parseValue()
            // Swift compares strings by canonical equivalence, so names that differ only in Unicode
            // normalisation also count as duplicates: a dictionary could not keep both anyway.
            guard members.updateValue(value, forKey: name) == nil else { throw .duplicateMember }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw .invalid("expected a comma or a closing brace in an object")
            }
        }
    }

    private mutating func parseArray<Value: StrictJSONTree>() throws(Failure) -> Value {
        try enterContainer()
        defer { depth -= 1 }
        var elements: [Value] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw .invalid("expected a comma or a closing bracket in an array")
            }
        }
    }

    private mutating func parseLiteral(_ literal: StaticString) throws(Failure) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected)
        else { throw .invalid("unknown literal") }
        index += expected.count
    }

    private mutating func parseDigits() -> Int {
        let start = index
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    /// The number's text, checked against RFC 8259's grammar.
    private mutating func parseNumber() throws(Failure) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            guard parseDigits() > 0 else { throw .invalid("a number needs digits") }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard parseDigits() > 0 else { throw .invalid("a number needs digits after its decimal point") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard parseDigits() > 0 else { throw .invalid("a number needs digits in its exponent") }
        }
        // The grammar above admits only RFC 8259 numbers, so `Double(_:)` never sees "nan", "inf" or hex.
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseHexQuad() throws(Failure) -> UInt16 {
        guard bytes.count - index >= 4 else { throw .invalid("a \\u escape needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalid("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        // Most strings hold no escape: found whole and made at once. The document is valid UTF-8 and a quote is
        // ASCII, so the bytes between two quotes are valid UTF-8 too.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 { index += 1 }
        if current == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        var buffer = Array(bytes[start..<index])
        while true {
            guard let byte = current else { throw .invalid("a string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0x00..<0x20:
                throw .invalid("a string holds an unescaped control character")
            default:
                buffer.append(byte)
            }
        }
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(Failure) {
        guard let byte = current else { throw .invalid("a string ends inside an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHexQuad()
            var scalarValue = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw .invalid("a string holds a lone surrogate escape") }
                index += 2
                let low = try parseHexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw .invalid("a string holds a lone surrogate escape") }
                scalarValue = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
            case 0xDC00...0xDFFF:
                throw .invalid("a string holds a lone surrogate escape")
            default:
                break
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw .invalid("a string holds an invalid escape") }
            UTF8.encode(scalar) { buffer.append($0) }
        default:
            throw .invalid("a string holds an unknown escape")
        }
    }
}
