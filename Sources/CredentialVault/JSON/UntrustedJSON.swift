package import Foundation

/// The one way JSON from outside reaches Foundation's decoders: a server's answer, a file on disk, a line on
/// the agent's socket, the CLI's config file.
///
/// Foundation's `JSONDecoder` and `JSONSerialization` parse by recursion, up to 512 levels, and a document whose
/// 513th level is opened by its last byte (`[` 513 times) makes Foundation's scanner trap while it words its own
/// error: any server could end the process (issue 21, SIGILL in `JSONError.SourceLocation.sourceLocation`). So the
/// bytes are first measured with a loop that does not recurse: more than ``maximumDepth`` nested arrays and objects,
/// or more than the caller's size limit, is refused with a ``Refusal`` before any decoder sees the bytes.
/// ``members(from:maximumSize:)`` reads with the strict parser instead (``StrictJSONParser``), which bounds nesting as
/// it reads and refuses a repeated member name: the token endpoint's and the key service's answers go that way.
/// Each caller maps a refusal, like any other undecodable answer, to its own ``VaultError``. A source scan test
/// (`UntrustedJSONSourceTests`) fails when code under `Sources/` decodes JSON any other way.
package enum UntrustedJSON {
    /// The deepest nesting of arrays and objects accepted in any JSON the library reads, the outermost counting as
    /// 1: far past any document it expects (a FHIR resource, a JWK Set, an envelope), far below what overflows a
    /// stack. The strict JWT parser (``StrictJSONParser``) applies the same rule.
    package static let maximumDepth = 64

    /// The size limit when the caller names none: the largest answer a server may send by default
    /// (``HTTPRequest/defaultMaximumAnswerSize``).
    package static let defaultMaximumSize = HTTPRequest.defaultMaximumAnswerSize

    /// Why bytes were refused before decoding, or that the decoder refused them.
    package enum Refusal: Error, Equatable, CustomStringConvertible {
        /// More than `limit` bytes.
        case tooLarge(size: Int, limit: Int)
        /// Arrays and objects nested deeper than ``UntrustedJSON/maximumDepth``.
        case tooDeep(limit: Int)
        /// Not UTF-8: a NUL byte or a UTF-16 byte-order mark (RFC 8259 §8.1: JSON exchanged between systems is
        /// UTF-8).
        case notUTF8
        /// Within both limits, but not JSON of the expected shape.
        case notDecodable

        package var description: String {
            switch self {
            case .tooLarge(let size, let limit): "the JSON is \(size) bytes, over the limit of \(limit)"
            case .tooDeep(let limit): "the JSON nests arrays and objects deeper than \(limit) levels"
            case .notUTF8: "the JSON is not UTF-8"
            case .notDecodable: "the JSON is not of the expected shape"
            }
        }
    }

    /// `bytes` decoded as `Value`.
    ///
    /// - Throws: ``Refusal``: `.tooLarge` past `maximumSize` bytes, `.tooDeep` past ``maximumDepth`` levels, or
    ///   `.notDecodable` when `JSONDecoder` refuses the bytes.
    package static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: Data,
        maximumSize: Int = defaultMaximumSize
    ) throws(Refusal) -> Value {
        try check(bytes, maximumSize: maximumSize)
        do {
            return try JSONDecoder().decode(type, from: bytes)
        } catch {
            throw .notDecodable
        }
    }

    /// `bytes` as a JSON object's members, read by the strict parser (``StrictJSONParser``: two members of one name
    /// are refused at every depth, as in a JWT, so no two readers of an answer see different values; nesting is
    /// bounded as it reads), without `Decodable`'s machinery: the answers every login reads (the token endpoint's,
    /// the key service's). A UTF-8 byte-order mark before the object is skipped, as Foundation's decoders skip it
    /// (RFC 8259 section 8.1 lets a parser ignore it; some servers send one).
    ///
    /// - Throws: ``Refusal``: `.tooLarge` past `maximumSize` bytes, `.notUTF8` for bytes that are not UTF-8,
    ///   `.tooDeep` past ``maximumDepth`` levels, or `.notDecodable` for anything but one JSON object (a raw NUL or
    ///   control character included: the strict parser refuses it where it stands).
    package static func members(
        from bytes: Data,
        maximumSize: Int = defaultMaximumSize
    ) throws(Refusal) -> [String: JSONValue] {
        guard bytes.count <= maximumSize else { throw .tooLarge(size: bytes.count, limit: maximumSize) }
        var text = Array(bytes)
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        let value: JSONValue
        do {
            value = try StrictJSONParser.parse(text)
        } catch {
            switch error {
            case .invalidUTF8: throw .notUTF8
            case .tooDeep: throw .tooDeep(limit: maximumDepth)
            case .invalid, .duplicateMember: throw .notDecodable
            }
        }
        guard case .object(let members) = value else { throw .notDecodable }
        return members
    }

    /// A member (of ``members(from:maximumSize:)``) the JSON may leave out: `.some(nil)` when absent or null,
    /// `.some(read(value))` when `read` takes the value, nil when it does not (the JSON is not of its shape).
    package static func optional<Value>(_ member: JSONValue?, _ read: (JSONValue) -> Value?) -> Value?? {
        switch member {
        case nil, .null?: .some(nil)
        case let value?: read(value).map { .some($0) }
        }
    }

    /// ``optional(_:_:)`` for the member `name` of `members` that is a string when present.
    package static func optionalString(_ name: String, in members: [String: JSONValue]) -> String?? {
        optional(members[name]) { $0.stringValue }
    }

    /// `bytes` as a JSON object (`JSONSerialization`'s dictionary of `Any`).
    ///
    /// - Throws: ``Refusal``, as ``decode(_:from:maximumSize:)`` does; `.notDecodable` for JSON that is not an
    ///   object.
    package static func object(from bytes: Data, maximumSize: Int = defaultMaximumSize) throws(Refusal) -> [String: Any]
    {
        try check(bytes, maximumSize: maximumSize)
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            throw .notDecodable
        }
        return object
    }

    /// Refuses `bytes` past `maximumSize`, not UTF-8, or nested past ``maximumDepth``, in one pass that does not
    /// recurse: it counts `[` and `{` against `]` and `}` outside strings (a `\"` does not end a string). Malformed
    /// JSON that passes is the decoder's to refuse.
    ///
    /// Foundation reads UTF-16 and UTF-32 too (told by a byte-order mark or by NUL bytes), where a byte `"` can be
    /// half of another character: the count is only right for the UTF-8 the decoder will read, so anything else is
    /// refused first. No NUL byte and no UTF-16 mark leaves Foundation nothing but UTF-8 (a UTF-8 mark is skipped).
    ///
    /// - Throws: ``Refusal/tooLarge(size:limit:)``, ``Refusal/notUTF8`` or ``Refusal/tooDeep(limit:)``.
    package static func check(_ bytes: Data, maximumSize: Int = defaultMaximumSize) throws(Refusal) {
        guard bytes.count <= maximumSize else { throw .tooLarge(size: bytes.count, limit: maximumSize) }
        // Over the contiguous bytes, not through Data's element-wise iteration: every answer and every envelope read
        // passes here.
        let deepest = bytes.withUnsafeBytes { buffer -> Int? in
            guard !startsWithUTF16Mark(buffer), !containsNUL(buffer) else { return nil }
            return depth(of: buffer)
        }
        guard let deepest else { throw .notUTF8 }
        guard deepest <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
    }

    /// Whether `bytes` begin with a UTF-16 byte-order mark (FE FF or FF FE).
    private static func startsWithUTF16Mark(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 2 else { return false }
        return (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE)
    }

    /// Whether `bytes` hold a NUL byte.
    private static func containsNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(start, 0, bytes.count) != nil
    }

    /// The deepest nesting of arrays and objects in `bytes`, counted to one past ``maximumDepth`` at most.
    private static func depth(of bytes: UnsafeRawBufferPointer) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > deepest {
                    deepest = depth
                    if deepest > maximumDepth { return deepest }
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                // A closing bracket too many is malformed: the decoder refuses it; the count never goes below 0.
                depth = max(0, depth - 1)
            default:
                continue
            }
        }
        return deepest
    }
}
