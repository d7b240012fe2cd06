import Foundation
import Testing
import VaultTestSupport

@testable import CredentialVault

/// The JSON the library writes itself (the key-service request, the sealed record, the envelope), checked against
/// Foundation, an independent reader and writer of RFC 8259.
@Suite("JSONWriter writes JSON Foundation reads back, laid out as JSONEncoder lays it out")
struct JSONWriterTests {
    @Test("random values come back equal from Foundation's decoder and the strict parser, compact and laid out")
    func randomValuesReadBack() throws {
        var generator = SplitMix64(seed: 0x1550_E23)
        for _ in 0..<3_000 {
            let value = Self.randomValue(&generator, depth: 0)
            for indented in [false, true] {
                let bytes = JSONWriter.bytes(of: value, indented: indented)
                #expect(bytes.count <= JSONWriter.capacity(for: value, indented: indented))
                #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == value)
                #expect(try StrictJSONParser.parse(bytes) == value)
            }
        }
    }

    @Test("the same bytes as JSONEncoder with sorted keys, compact and pretty-printed, for text it escapes alike")
    func sameBytesAsJSONEncoder() throws {
        let value: JSONValue = [
            "format": "credential-vault/v2",
            "kdf": ["algorithm": "argon2id13", "opsLimit": 2, "memLimitBytes": 19_922_944, "salt": "c2FsdA"],
            "binding": ["issuer": "https://id.example/realms/a", "clientId": "app", "keyService": "https://k.example"],
            "createdAt": 1_800_000_000,
            "ratio": 0.5,
            "negative": -42,
            "flags": [true, false, .null],
            "text": #"quote " backslash \ slash / é € 😀"#,
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(JSONWriter.bytes(of: value) == Array(try encoder.encode(value)))
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let pretty = JSONWriter.bytes(of: value, indented: true)
        #expect(String(decoding: pretty, as: UTF8.self) == String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    @Test("a number JSON cannot hold is written as null; whole numbers have no fraction; empty containers")
    func edges() {
        let value: JSONValue = [.number(.nan), .number(.infinity), .number(-.infinity), 3, -0.0, 1e300, 0.1, [], [:]]
        #expect(String(decoding: JSONWriter.bytes(of: value), as: UTF8.self) == "[null,null,null,3,0,1e+300,0.1,[],{}]")
        #expect(String(decoding: JSONWriter.bytes(of: [:], indented: true), as: UTF8.self) == "{}")
    }

    /// Strings of control characters, quotes, backslashes and text beyond ASCII; whole and fractional numbers from
    /// their bits; arrays and objects up to four levels.
    static func randomValue(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        let alphabet: [Unicode.Scalar] =
            (0..<0x80).compactMap(Unicode.Scalar.init) + ["é", "€", "\u{1F600}", "\u{FEFF}", "\u{2028}"]
        func text() -> String {
            let count = Int(generator.next() % 10)
            return String(
                String.UnicodeScalarView(
                    (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
                )
            )
        }
        switch generator.next() % (depth < 4 ? 7 : 5) {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2:
            let bits = Double(bitPattern: generator.next())
            let whole = Double(Int64(bitPattern: generator.next()) >> Int(generator.next() % 64))
            return .number(generator.next() % 2 == 0 && bits.isFinite ? bits : whole)
        case 3, 4: return .string(text())
        case 5: return .array((0..<generator.next() % 4).map { _ in randomValue(&generator, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<generator.next() % 4 { members[text()] = randomValue(&generator, depth: depth + 1) }
            return .object(members)
        }
    }
}
