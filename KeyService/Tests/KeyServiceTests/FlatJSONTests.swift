import Foundation
import NIOCore
import Testing
import VaultTestSupport

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

    /// Differential: bodies made from a plain one by random edits (bytes replaced, inserted and deleted, drawn from
    /// JSON's own punctuation, escapes, whitespace, control and non-UTF-8 bytes). Whenever the reader answers, the
    /// answer is JSONDecoder's own for that body; a seeded generator, so a failure names the body it failed on.
    @Test("whatever the reader reads, JSONDecoder reads the same: 20,000 edited bodies")
    func agreesWithJSONDecoder() throws {
        var generator = SplitMix64(seed: 0x4a53_4f4e_2d66_6c61)
        let base = Array(#"{"keyid":"k-1","secret":"s/é","longsecret":"q7Yx+u0AA=="}"#.utf8)
        let alphabet = Array(#"{}[]":,\ "#.utf8) + [0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF, 0x61, 0x75]
        var read = 0
        for _ in 0..<20_000 {
            var body = base
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = Int(generator.next() % UInt64(body.count + 1))
                let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                switch generator.next() % 3 {
                case 0 where position < body.count: body[position] = byte
                case 1: body.insert(byte, at: position)
                default: if position < body.count { body.remove(at: position) }
                }
            }
            guard let fields = FlatJSON.plainStrings(in: Data(body)) else { continue }
            read += 1
            let decoded = try? JSONDecoder().decode([String: String].self, from: Data(body))
            #expect(decoded == fields, "body \(body.map { String(format: "%02x", $0) }.joined())")
        }
        // The edits leave some bodies plain (whitespace added, a letter changed): the comparison is not empty.
        #expect(read > 1_000)
    }
}
