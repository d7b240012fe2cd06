import CredentialVault
import Foundation
import Testing

@Suite("JSONValue through Codable")
struct JSONValueCodableTests {
    static let values: [JSONValue] = [
        .null,
        true,
        false,
        0,
        -17,
        3.25,
        1e300,
        -2.5e-8,
        9_007_199_254_740_992,
        "",
        "plain text",
        [],
        [:],
        [1, "two", [false, .null], ["three": 3]],
        [
            "sub": "alice",
            "exp": 1_700_000_000,
            "scope": ["openid", "offline_access"],
            "nested": ["deeper": ["deepest": [1.5, true, .null, [:], []]]],
        ],
    ]

    static func encoded(_ value: JSONValue) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    @Test("a value encoded with JSONEncoder decodes with JSONDecoder to the same value", arguments: values)
    func roundTrip(_ value: JSONValue) throws {
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test("numbers and Booleans stay apart: 1 is a number and true a Boolean, both ways")
    func numbersAreNotBooleans() throws {
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("1".utf8)) == .number(1))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("0".utf8)) == .number(0))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("true".utf8)) == .bool(true))
        #expect(try Self.encoded([1, true, 0, false]) == "[1,true,0,false]")
    }

    @Test("whole numbers are written without a fraction, others as they are")
    func wholeNumbers() throws {
        #expect(try Self.encoded(3) == "3")
        #expect(try Self.encoded(-17) == "-17")
        #expect(try Self.encoded(0) == "0")
        #expect(try Self.encoded(1_700_000_000) == "1700000000")
        #expect(try Self.encoded(["exp": 1_700_000_000.0]) == #"{"exp":1700000000}"#)
        // Large enough that a Double would be written in exponent notation.
        #expect(try Self.encoded(1e17) == "100000000000000000")
        #expect(try Self.encoded(2.5) == "2.5")
        #expect(
            try JSONSerialization.jsonObject(with: Data(Self.encoded(1e300).utf8), options: .fragmentsAllowed)
                as? Double == 1e300
        )
    }

    /// Every character JSON requires escaped (quote, backslash, U+0000 to U+001F), plus DEL, a slash and
    /// characters outside ASCII.
    static let awkward =
        "quote \" backslash \\ slash / "
        + String(String.UnicodeScalarView((0x00...0x1F).compactMap(Unicode.Scalar.init)))
        + " del \u{7F} line\u{2028}separator é 🔑"

    @Test("quotes, backslashes and control characters are escaped so a strict parser reads them back")
    func escaping() throws {
        let claims: JSONValue = ["sub": "alice", "text": .string(Self.awkward), Self.awkward: "as a name"]
        let json = try Self.encoded(claims)
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 }, "a raw control character: \(json)")

        // The library's strict parser, through a token whose claims are this JSON.
        let jwt = try JWT(token: JWTFixture.make(payload: json))
        #expect(jwt.claims["text"] == .string(Self.awkward))
        #expect(jwt.claims[Self.awkward] == "as a name")
        #expect(JSONValue.object(jwt.claims) == claims)

        // And Foundation's parser agrees.
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["text"] as? String == Self.awkward)
    }
}
