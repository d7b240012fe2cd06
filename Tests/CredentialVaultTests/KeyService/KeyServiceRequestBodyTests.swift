import Foundation
import Testing
import VaultTestSupport

@testable import CredentialVault

@Suite("The key-service request body is the JSON object Foundation reads back")
struct KeyServiceRequestBodyTests {
    /// What the key service reads: Foundation's decoder, an independent reader of RFC 8259.
    private struct Read: Codable, Equatable {
        var keyid: String?
        var secret: String?
        var longsecret: String?
        var blinded: String?
        var authkey: String?
        var nonce: String?
        var proof: String?
    }

    @Test("every field in the order of its name, as JSONEncoder with sorted keys writes it")
    func keyRequest() throws {
        let body = KeyServiceRequestBody(keyid: "3f1c-key", secret: "c2VjcmV0LWJhc2U2NHVybA")
        #expect(
            String(decoding: body.json, as: UTF8.self) == #"{"keyid":"3f1c-key","secret":"c2VjcmV0LWJhc2U2NHVybA"}"#
        )
        #expect(String(decoding: KeyServiceRequestBody().json, as: UTF8.self) == "{}")
        let all = KeyServiceRequestBody(
            keyid: "k",
            secret: "s",
            longsecret: "l",
            blinded: "b",
            authkey: "a",
            nonce: "n",
            proof: "p"
        )
        let expected =
            #"{"authkey":"a","blinded":"b","keyid":"k","longsecret":"l","nonce":"n","proof":"p","secret":"s"}"#
        #expect(String(decoding: all.json, as: UTF8.self) == expected)
        // The same bytes JSONEncoder writes with sorted keys, for text it escapes no differently.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let read = try JSONDecoder().decode(Read.self, from: all.json)
        #expect(try encoder.encode(read) == all.json)
    }

    @Test("quotes, backslashes, every control character and non-ASCII text come back as written")
    func escaping() throws {
        let controls = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let values = [#"a"b\c/d"#, controls, "\u{7F}é€\u{1F600}\u{2028}", "", #"\u0041"#]
        for value in values {
            let body = KeyServiceRequestBody(keyid: value, secret: value, nonce: value)
            let read = try JSONDecoder().decode(Read.self, from: body.json)
            #expect(read == Read(keyid: value, secret: value, nonce: value))
            #expect(try JSONSerialization.jsonObject(with: body.json) as? [String: String] != nil)
        }
    }

    @Test("random strings of every field come back as written (20,000 bodies, seeded)")
    func randomStrings() throws {
        var generator = SplitMix64(seed: 0x5EED_23)
        let alphabet: [Unicode.Scalar] =
            (0..<0x80).compactMap(Unicode.Scalar.init) + ["é", "€", "\u{1F600}", "\u{FEFF}", "\u{2029}"]
        func text() -> String? {
            guard generator.next() % 4 != 0 else { return nil }
            let count = Int(generator.next() % 12)
            return String(
                String.UnicodeScalarView(
                    (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
                )
            )
        }
        for _ in 0..<20_000 {
            let expected = Read(
                keyid: text(),
                secret: text(),
                longsecret: text(),
                blinded: text(),
                authkey: text(),
                nonce: text(),
                proof: text()
            )
            let body = KeyServiceRequestBody(
                keyid: expected.keyid,
                secret: expected.secret,
                longsecret: expected.longsecret,
                blinded: expected.blinded,
                authkey: expected.authkey,
                nonce: expected.nonce,
                proof: expected.proof
            )
            let read = try JSONDecoder().decode(Read.self, from: body.json)
            #expect(read == expected)
            if read != expected { break }
        }
    }
}
