/// JSON written directly, without `JSONEncoder`: compact, each object's members in the order of their names (Swift's
/// `<` on strings, the order `JSONEncoder`'s `.sortedKeys` gives the names the library writes), strings as RFC 8259
/// section 7 has them (`"`, `\` and the control characters escaped, everything else as its UTF-8; `JSONEncoder` also
/// wrote `/` as `\/`: any JSON parser reads both the same).
///
/// For the JSON every login writes: the key-service request (``KeyServiceRequestBody``), the record sealed in the
/// envelope (``SealedRecord``) and the envelope (``Envelope``). Right after Argon2id every cache is cold, and
/// `JSONEncoder` took 40 µs of the first and about 100 µs of the second (issue 23).
enum JSONWriter {
    /// `value` as JSON: compact, or `indented` as `JSONEncoder`'s `.prettyPrinted` lays it out (two spaces a level,
    /// `"name" : value`), for a file a person may read. A number that is not finite, which JSON cannot hold, is
    /// written as `null`; a whole number without a fraction (`3`, not `3.0`), any other in the shortest form that
    /// reads back as the same `Double`.
    ///
    /// The bytes are written into one buffer of ``capacity(for:indented:)`` bytes, never grown: a record that holds
    /// secrets leaves no copy behind in a buffer given up on the way, and the caller zeroes the one there is
    /// (``zero(_:)``).
    static func bytes(of value: JSONValue, indented: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity(for: value, indented: indented))
        append(value, to: &bytes, level: indented ? 0 : nil)
        return bytes
    }

    /// Appends `value` as JSON to `bytes`: compact when `level` is nil, else laid out as at that depth.
    private static func append(_ value: JSONValue, to bytes: inout [UInt8], level: Int?) {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let value):
            bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value):
            if !value.isFinite {
                bytes.append(contentsOf: "null".utf8)
            } else if let whole = Int64(exactly: value) {
                bytes.append(contentsOf: String(whole).utf8)
            } else {
                // Swift's description of a finite Double is the shortest text that reads back as it (`0.1`,
                // `1e-07`), which is JSON's number grammar.
                bytes.append(contentsOf: value.description.utf8)
            }
        case .string(let value):
            append(string: value, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newLine(&bytes, level: level.map { $0 + 1 })
                append(element, to: &bytes, level: level.map { $0 + 1 })
            }
            if !elements.isEmpty { newLine(&bytes, level: level) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newLine(&bytes, level: level.map { $0 + 1 })
                append(string: name, to: &bytes)
                bytes.append(contentsOf: (level == nil ? ":" : " : ").utf8)
                append(members[name]!, to: &bytes, level: level.map { $0 + 1 })
            }
            if !members.isEmpty { newLine(&bytes, level: level) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Overwrites `bytes` with zeros: for JSON that held a secret, once it is copied where it goes.
    static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// A line break and the indentation of `level`; nothing when compact (`level` nil).
    private static func newLine(_ bytes: inout [UInt8], level: Int?) {
        guard let level else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Appends `string` as a JSON string to `bytes`.
    private static func append(string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// At least the number of bytes ``bytes(of:indented:)`` writes for `value`: each string counted as if every byte
    /// of it took the longest escape (6 bytes), each number as the longest text a `Double` or an `Int64` has.
    static func capacity(for value: JSONValue, indented: Bool = false) -> Int {
        capacity(for: value, level: indented ? 0 : nil)
    }

    private static func capacity(for value: JSONValue, level: Int?) -> Int {
        // Per element or member: a comma, and when laid out a line break, its indentation and ` : `.
        let separator = level.map { 2 * ($0 + 1) + 5 } ?? 2
        let closing = level.map { 2 * $0 + 1 } ?? 0
        let inner = level.map { $0 + 1 }
        switch value {
        case .null, .bool: return 5
        case .number: return 32
        case .string(let value): return stringCapacity(value)
        case .array(let elements):
            return elements.reduce(2 + closing) { $0 + separator + capacity(for: $1, level: inner) }
        case .object(let members):
            return members.reduce(2 + closing) {
                $0 + separator + stringCapacity($1.key) + capacity(for: $1.value, level: inner)
            }
        }
    }

    private static func stringCapacity(_ string: String) -> Int {
        string.utf8.count * 6 + 2
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
