import Foundation
import Testing

@testable import CredentialVault

/// The one entry point of untrusted JSON: depth and size are refused before Foundation's recursive decoder sees
/// the bytes, by a scan that does not recurse itself and does not count brackets inside strings.
@Suite("untrusted JSON: depth and size refused before decoding")
struct UntrustedJSONTests {
    /// `levels` arrays and objects, alternating, around `1`: `[{"a":[{"a":...1...}]}]`.
    static func nested(_ levels: Int) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(levels * 7)
        for level in 0..<levels { bytes += Array((level % 2 == 0 ? "[" : #"{"a":"#).utf8) }
        bytes += Array("1".utf8)
        for level in (0..<levels).reversed() { bytes.append(UInt8(ascii: level % 2 == 0 ? "]" : "}")) }
        return Data(bytes)
    }

    @Test("a document nested 100,000 levels deep is refused as too deep, on a cooperative thread, without a crash")
    func veryDeep() async throws {
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode(JSONValue.self, from: Self.nested(100_000))
        }
        let opened = Data(String(repeating: "[", count: 100_000).utf8)
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) { try UntrustedJSON.object(from: opened) }
    }

    @Test("513 arrays opened by the last byte, on which Foundation's JSONScanner traps (issue 21), are refused")
    func foundationTrap() async throws {
        // Foundation refuses past 512 levels, but computing where that error is traps when it is at the last byte.
        let trap = Data(String(repeating: "[", count: 513).utf8)
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode(JSONValue.self, from: trap)
        }
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) { try UntrustedJSON.object(from: trap) }
    }

    @Test("UTF-16 and UTF-32 JSON, which Foundation reads and in which a byte '\"' can be half a character, is refused")
    func notUTF8() throws {
        // `["≁",` then 512 `[`: U+2241 is the bytes 41 22 in UTF-16LE, so a byte scan would take its second byte for
        // the string's end and every `[` after the real end for text inside a string; Foundation, converting to UTF-8
        // first, would meet 513 levels opened by the last character, its trap.
        let trap = #"["≁","# + String(repeating: "[", count: 512)
        let encodings: [String.Encoding] = [.utf16LittleEndian, .utf16BigEndian, .utf16, .utf32LittleEndian, .utf32]
        for encoding in encodings {
            let bytes = try #require(trap.data(using: encoding))
            #expect(throws: UntrustedJSON.Refusal.notUTF8) { try UntrustedJSON.decode(JSONValue.self, from: bytes) }
            #expect(throws: UntrustedJSON.Refusal.notUTF8) { try UntrustedJSON.object(from: bytes) }
        }
        // A NUL anywhere is refused too; UTF-8 with its byte-order mark is still read.
        #expect(throws: UntrustedJSON.Refusal.notUTF8) {
            try UntrustedJSON.decode(JSONValue.self, from: Data([0x5B, 0x00, 0x5D]))
        }
        let marked = Data([0xEF, 0xBB, 0xBF] + Array(#"{"a":"≁"}"#.utf8))
        #expect(try UntrustedJSON.decode([String: String].self, from: marked)["a"] == "≁")
        #expect(try UntrustedJSON.members(from: marked)["a"] == .string("≁"))
    }

    @Test("64 levels are decoded, 65 are refused: the strict JWT parser's rule")
    func limit() throws {
        #expect(UntrustedJSON.maximumDepth == 64)
        #expect(StrictJSONParser.maximumDepth == UntrustedJSON.maximumDepth)
        _ = try UntrustedJSON.decode(JSONValue.self, from: Self.nested(64))
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode(JSONValue.self, from: Self.nested(65))
        }
    }

    @Test("brackets inside a string, escaped quotes among them, are not nesting")
    func bracketsInStrings() throws {
        // 100,000 times `\"[{` inside one string value: an escaped quote does not end the string.
        let text = #"{"a":""# + String(repeating: #"\"[{"#, count: 100_000) + #"","b":[["x\\"]]}"#
        let decoded = try UntrustedJSON.decode([String: JSONValue].self, from: Data(text.utf8), maximumSize: 1 << 21)
        #expect(decoded["a"]?.stringValue?.count == 300_000)
        #expect(decoded["b"] == [["x\\"]])
        // An escaped backslash before the closing quote ends the string: the brackets after it count.
        let after = #"{"a":"\\","b":"# + String(repeating: "[", count: 65) + String(repeating: "]", count: 65) + "}"
        #expect(throws: UntrustedJSON.Refusal.tooDeep(limit: 64)) {
            try UntrustedJSON.decode([String: JSONValue].self, from: Data(after.utf8))
        }
    }

    @Test("more bytes than the limit are refused before decoding; malformed JSON is not decodable")
    func sizeAndShape() throws {
        let big = Data(#"{"a":""#.utf8 + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + #""}"#.utf8)
        #expect(throws: UntrustedJSON.Refusal.tooLarge(size: big.count, limit: 1 << 20)) {
            try UntrustedJSON.decode([String: String].self, from: big)
        }
        #expect(try UntrustedJSON.decode([String: String].self, from: big, maximumSize: 2 << 20)["a"]?.count == 1 << 20)
        #expect(throws: UntrustedJSON.Refusal.notDecodable) {
            try UntrustedJSON.decode([String: String].self, from: Data("]]]}}} not json".utf8))
        }
        #expect(throws: UntrustedJSON.Refusal.notDecodable) { try UntrustedJSON.object(from: Data("[1]".utf8)) }
    }

    @Test("members: one object read by the strict parser; each refusal named, a repeated name refused at any depth")
    func members() throws {
        let read = try UntrustedJSON.members(from: Data(#" {"a":"x","b":null,"c":[1,true],"d":{"e":2}} "#.utf8))
        #expect(
            read == [
                "a": .string("x"), "b": .null, "c": .array([.number(1), .bool(true)]), "d": .object(["e": .number(2)]),
            ]
        )
        let refusals: [(String, [UInt8], UntrustedJSON.Refusal)] = [
            ("a repeated name", Array(#"{"a":"x","a":"y"}"#.utf8), .notDecodable),
            ("a repeated name one level down", Array(#"{"a":{"b":1,"b":2}}"#.utf8), .notDecodable),
            ("an array", Array("[]".utf8), .notDecodable),
            ("a string", Array(#""x""#.utf8), .notDecodable),
            ("text after the object", Array(#"{"a":1} {}"#.utf8), .notDecodable),
            ("a raw NUL in a string", [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0x00, 0x22, 0x7D], .notDecodable),
            ("a byte that is not UTF-8", [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], .notUTF8),
            ("65 levels", Array(Self.nested(65)), .tooDeep(limit: 64)),
        ]
        for (what, bytes, refusal) in refusals {
            #expect(throws: refusal, "\(what)") { try UntrustedJSON.members(from: Data(bytes)) }
        }
        #expect(throws: UntrustedJSON.Refusal.tooLarge(size: 9, limit: 8)) {
            try UntrustedJSON.members(from: Data(#"{"a":"x"}"#.utf8), maximumSize: 8)
        }
    }

    @Test("optionalString: absent and null are none, a string is itself, any other kind is not the answer's shape")
    func optionalString() {
        let members: [String: JSONValue] = ["s": .string("x"), "n": .null, "i": .number(5), "o": .object([:])]
        #expect(UntrustedJSON.optionalString("s", in: members) == .some("x"))
        #expect(UntrustedJSON.optionalString("n", in: members) == .some(nil))
        #expect(UntrustedJSON.optionalString("absent", in: members) == .some(nil))
        #expect(UntrustedJSON.optionalString("i", in: members) == nil)
        #expect(UntrustedJSON.optionalString("o", in: members) == nil)
    }
}
