import Foundation
import NIOCore
import Testing

@testable import KeyServiceCore

/// The key-service bodies written and read without the JSON coders (``FlatJSON``): the writer's bytes are what
/// `JSONEncoder` (sorted keys, slashes unescaped) wrote, and the reader answers only for the plainest objects, leaving
/// everything else to `JSONDecoder`.
@Suite("flat JSON bodies without the JSON coders")
struct FlatJSONTests {
    static func encoderBytes(_ fields: [String: String]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(fields))
    }

    @Test(
        "the writer gives JSONEncoder's bytes",
        arguments: [
            "q7Yx/u+0AA==", "4a1c9b2e-0d6f-4b8e-9f41-3c2d1e0f5a6b", "a\"quote and \\ backslash", "tab\tnew\nline\r",
            "control \u{01}\u{1F}", "unicode é ✓ 🔑",
        ]
    )
    func writerMatchesEncoder(value: String) throws {
        let written = FlatJSON.object(["key": value, "keyid": "id/1", "longsecret": value])
        let expected = try Self.encoderBytes(["key": value, "keyid": "id/1", "longsecret": value])
        #expect(Array(written.readableBytesView) == expected)
    }

    @Test("a plain object of strings is read, whitespace and unknown fields included")
    func readsPlainObject() {
        let body = Data(#" { "keyid" : "k-1", "secret":"s/é", "other": "x" } "#.utf8)
        #expect(FlatJSON.plainStrings(in: body) == ["keyid": "k-1", "secret": "s/é", "other": "x"])
        #expect(FlatJSON.plainStrings(in: Data("{}".utf8)) == [:])
    }

    @Test(
        "anything but a plain object of strings is left to JSONDecoder",
        arguments: [
            #"{"keyid":"a\"b"}"#, #"{"keyid":"a\u0041"}"#, #"{"keyid":"a","keyid":"b"}"#, #"{"keyid":null}"#,
            #"{"keyid":1}"#, #"{"keyid":"a"} x"#, #"{"keyid":"a",}"#, #"["a"]"#, #"{"keyid":"a""#, "",
        ]
    )
    func leavesTheRest(body: String) {
        #expect(FlatJSON.plainStrings(in: Data(body.utf8)) == nil)
    }

    @Test("bytes that are not UTF-8, or a raw control character, are left to JSONDecoder")
    func leavesInvalidText() {
        #expect(FlatJSON.plainStrings(in: Data([0x7B, 0x22, 0x6B, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])) == nil)
        #expect(FlatJSON.plainStrings(in: Data("{\"k\":\"a\u{01}\"}".utf8)) == nil)
    }
}
