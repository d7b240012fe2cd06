import CredentialVault
import Foundation
import Testing
import VaultCrypto

/// One hostile input and the code it must end in (`nil`: it must decode).
struct HostileCase: CustomTestStringConvertible, Sendable {
    let name: String
    let token: String
    let expected: JWTError.Code?

    init(_ name: String, _ token: String, _ expected: JWTError.Code?) {
        self.name = name
        self.token = token
        self.expected = expected
    }

    var testDescription: String { name }
}

private let header = JWTFixture.segment(JWTFixture.header)
private let payload = JWTFixture.segment(#"{"sub":"alice"}"#)
private let signature = JWTFixture.signature
private let good = "\(header).\(payload).\(signature)"

@Suite("JWT hostile input: segments and size")
struct JWTSegmentTests {
    static let cases: [HostileCase] = [
        HostileCase("a well-formed token decodes", good, nil),
        HostileCase("empty string", "", .malformed),
        HostileCase("one segment", header, .malformed),
        HostileCase("two segments", "\(header).\(payload)", .malformed),
        HostileCase("four segments", "\(good).\(signature)", .malformed),
        HostileCase("a trailing dot makes four", "\(good).", .malformed),
        HostileCase("five segments (JWE shape)", "\(header).\(payload).\(payload).\(payload).\(signature)", .malformed),
        HostileCase("empty header segment", ".\(payload).\(signature)", .malformed),
        HostileCase("empty payload segment", "\(header)..\(signature)", .malformed),
        HostileCase("only two dots", "..", .malformed),
        HostileCase("only three dots", "...", .malformed),
        HostileCase("empty signature under HS256 (signature stripped)", "\(header).\(payload).", .malformed),
        HostileCase(
            "alg none with a signature",
            "\(JWTFixture.segment(#"{"alg":"none"}"#)).\(payload).\(signature)",
            .malformed
        ),
        HostileCase("a dot as the only separator variant", "\(header)。\(payload)。\(signature)", .malformed),
    ]

    @Test("segment counts and empty segments end in the right value or malformed", arguments: cases)
    func segments(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("the size is capped before splitting: over maximumLength is tooLong")
    func tooLong() {
        let limit = JWT.maximumLength
        #expect(limit == 16 * 1024)
        #expect(jwtDecodeFailure(String(repeating: "a", count: limit + 1)) == .tooLong)
        #expect(jwtDecodeFailure(String(repeating: ".", count: limit + 1)) == .tooLong)
        #expect(jwtDecodeFailure(String(repeating: ".", count: 1 << 20)) == .tooLong)
        #expect(jwtDecodeFailure(good + String(repeating: "A", count: limit)) == .tooLong)
        // Multi-byte characters count in UTF-8 bytes, not characters.
        #expect(jwtDecodeFailure(String(repeating: "é", count: limit / 2 + 1)) == .tooLong)
    }

    @Test("tokens made mostly of dots under the cap are malformed, not slow")
    func mostlyDots() {
        let limit = JWT.maximumLength
        #expect(jwtDecodeFailure(String(repeating: ".", count: limit)) == .malformed)
        #expect(jwtDecodeFailure("a" + String(repeating: ".", count: limit - 2) + "a") == .malformed)
        #expect(jwtDecodeFailure(String(repeating: "a.", count: limit / 2)) == .malformed)
    }

    /// A well-formed token of exactly `length` bytes, made by growing a padding claim and choosing a
    /// signature of 27 or 28 characters (base64url grows by one or two characters at a time).
    static func validToken(ofLength length: Int) -> String? {
        for padding in (length * 3 / 4 - 200)..<length {
            for signatureBytes in [20, 21] {
                let token = JWTFixture.make(
                    payload: #"{"sub":"alice","pad":"\#(String(repeating: "x", count: padding))"}"#,
                    signature: Base64URL.encode(Data(repeating: 7, count: signatureBytes))
                )
                if token.utf8.count == length { return token }
                if token.utf8.count > length + 2 { return nil }
            }
        }
        return nil
    }

    @Test("a valid token of exactly maximumLength decodes; one byte more is tooLong")
    func exactlyAtLimit() throws {
        let atLimit = try #require(Self.validToken(ofLength: JWT.maximumLength))
        #expect(jwtDecodeFailure(atLimit) == nil)
        let overLimit = try #require(Self.validToken(ofLength: JWT.maximumLength + 1))
        #expect(jwtDecodeFailure(overLimit) == .tooLong)
    }
}

@Suite("JWT hostile input: base64url per RFC 7515")
struct JWTBase64Tests {
    // {"sub":"alice","n":"~~~"} encodes with '-' in base64url and '+' in standard base64.
    static let urlPayload = "eyJzdWIiOiJhbGljZSIsIm4iOiJ-fn4ifQ"
    static let standardPayload = "eyJzdWIiOiJhbGljZSIsIm4iOiJ+fn4ifQ"
    // {"sub":"alice","n":"???"} encodes with '_' in base64url and '/' in standard base64.
    static let slashPayload = "eyJzdWIiOiJhbGljZSIsIm4iOiI/Pz8ifQ"

    static let cases: [HostileCase] = [
        HostileCase("the URL alphabet decodes", "\(header).\(urlPayload).\(signature)", nil),
        HostileCase("'+' from the standard alphabet", "\(header).\(standardPayload).\(signature)", .invalidBase64),
        HostileCase("'/' from the standard alphabet", "\(header).\(slashPayload).\(signature)", .invalidBase64),
        HostileCase("padding on the payload", "\(header).\(urlPayload)==.\(signature)", .invalidBase64),
        HostileCase("padding on the header", "\(header)=.\(payload).\(signature)", .invalidBase64),
        HostileCase("padding on the signature", "\(header).\(payload).\(signature)==", .invalidBase64),
        HostileCase("a space inside a segment", "\(header).eyJzdWIi OiJhbGljZSJ9.\(signature)", .invalidBase64),
        HostileCase("a leading space", " \(good)", .invalidBase64),
        HostileCase("a trailing newline", "\(good)\n", .invalidBase64),
        HostileCase(
            "a CRLF line break inside a segment",
            "\(header).eyJzdWIi\r\nOiJhbGljZSJ9.\(signature)",
            .invalidBase64
        ),
        HostileCase("a tab before a dot", "\(header)\t.\(payload).\(signature)", .invalidBase64),
        HostileCase("a length of 1 mod 4", "\(header).\(payload)A.\(signature)", .invalidBase64),
        // "eyJhbGciOiJub25lIn0" is {"alg":"none"}; its last character '0' carries two zero trailing bits,
        // '1' sets one of them: lenient decoders read the same bytes.
        HostileCase("non-zero trailing bits in the header", "eyJhbGciOiJub25lIn1.\(payload).", .invalidBase64),
        HostileCase("zero trailing bits in the header", "eyJhbGciOiJub25lIn0.\(payload).", nil),
        HostileCase("non-zero trailing bits in the signature", "\(header).\(payload).AB", .invalidBase64),
        HostileCase("a non-ASCII character in a segment", "\(header).\(payload)é.\(signature)", .invalidBase64),
        HostileCase("percent-encoding", "\(header).\(payload)%3D.\(signature)", .invalidBase64),
        HostileCase("a NUL character", "\(header).\(payload)\u{0}.\(signature)", .invalidBase64),
    ]

    @Test("base64url must be strict: no padding, URL alphabet, no whitespace, zero trailing bits", arguments: cases)
    func base64(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }
}

@Suite("JWT hostile input: JSON and UTF-8")
struct JWTJSONTests {
    static func payloadCase(_ name: String, _ json: String, _ expected: JWTError.Code?) -> HostileCase {
        HostileCase(name, JWTFixture.make(payload: json), expected)
    }

    static func bytesCase(_ name: String, _ bytes: [UInt8], _ expected: JWTError.Code?) -> HostileCase {
        HostileCase(name, "\(header).\(JWTFixture.segment(bytes: bytes)).\(signature)", expected)
    }

    static let notObjects: [HostileCase] = [
        payloadCase("an array", #"["sub","alice"]"#, .notAnObject),
        payloadCase("a string", #""alice""#, .notAnObject),
        payloadCase("a number", "1", .notAnObject),
        payloadCase("null", "null", .notAnObject),
        payloadCase("true", "true", .notAnObject),
        payloadCase("an empty array", "[]", .notAnObject),
        HostileCase("a header that is an array", JWTFixture.make(header: #"["HS256"]"#, payload: "{}"), .notAnObject),
    ]

    static let invalidJSON: [HostileCase] = [
        payloadCase("truncated", #"{"sub":"alice""#, .invalidJSON),
        payloadCase("a trailing comma", #"{"sub":"alice",}"#, .invalidJSON),
        payloadCase("single quotes", "{'sub':'alice'}", .invalidJSON),
        payloadCase("an unquoted name", #"{sub:"alice"}"#, .invalidJSON),
        payloadCase("text after the object", #"{"sub":"alice"} x"#, .invalidJSON),
        payloadCase("two objects", #"{"sub":"alice"}{"sub":"bob"}"#, .invalidJSON),
        payloadCase("a comment", #"{"sub":"alice"/* c */}"#, .invalidJSON),
        payloadCase("whitespace only", "  ", .invalidJSON),
        payloadCase("a byte order mark", "\u{FEFF}{\"sub\":\"alice\"}", .invalidJSON),
        payloadCase("NaN", #"{"sub":"alice","x":NaN}"#, .invalidJSON),
        payloadCase("Infinity", #"{"sub":"alice","x":Infinity}"#, .invalidJSON),
        payloadCase("-Infinity", #"{"sub":"alice","x":-Infinity}"#, .invalidJSON),
        payloadCase("a leading zero", #"{"sub":"alice","x":01}"#, .invalidJSON),
        payloadCase("a leading plus", #"{"sub":"alice","x":+1}"#, .invalidJSON),
        payloadCase("a bare decimal point", #"{"sub":"alice","x":.5}"#, .invalidJSON),
        payloadCase("a trailing decimal point", #"{"sub":"alice","x":1.}"#, .invalidJSON),
        payloadCase("hex", #"{"sub":"alice","x":0x10}"#, .invalidJSON),
        payloadCase("an exponent without digits", #"{"sub":"alice","x":1e}"#, .invalidJSON),
        payloadCase("a number beyond Double", #"{"sub":"alice","x":1e309}"#, .invalidJSON),
        payloadCase("a 400-digit number", #"{"sub":"alice","x":\#(String(repeating: "9", count: 400))}"#, .invalidJSON),
        payloadCase("an unescaped control character", "{\"sub\":\"al\u{1}ice\"}", .invalidJSON),
        payloadCase("an unescaped newline in a string", "{\"sub\":\"al\nice\"}", .invalidJSON),
        payloadCase("an unknown escape", #"{"sub":"al\xice"}"#, .invalidJSON),
        payloadCase("a short \\u escape", #"{"sub":"al\u00"}"#, .invalidJSON),
        payloadCase("a lone high surrogate", #"{"sub":"\ud800"}"#, .invalidJSON),
        payloadCase("a lone low surrogate", #"{"sub":"\udc00"}"#, .invalidJSON),
        payloadCase("a high surrogate before a letter", #"{"sub":"\ud800\u0041"}"#, .invalidJSON),
        payloadCase("two high surrogates", #"{"sub":"\ud800\ud800"}"#, .invalidJSON),
        payloadCase("True in capitals", #"{"sub":"alice","x":True}"#, .invalidJSON),
        payloadCase("a misspelt literal", #"{"sub":"alice","x":nul}"#, .invalidJSON),
        payloadCase("a missing colon", #"{"sub" "alice"}"#, .invalidJSON),
        payloadCase("an unclosed array", #"{"sub":"alice","x":[1,2}"#, .invalidJSON),
    ]

    static let accepted: [HostileCase] = [
        payloadCase("whitespace of all four kinds", " \t\r\n{ \"sub\" :\n\"alice\"\t} \r\n", nil),
        payloadCase("a surrogate pair escape", #"{"sub":"\ud83d\ude00"}"#, nil),
        payloadCase("an escaped NUL", #"{"sub":"a\u0000b"}"#, nil),
        payloadCase("an empty member name", #"{"sub":"alice","":1}"#, nil),
        payloadCase("numbers of every form", #"{"sub":"alice","x":[-0,0.5,1E3,1e-400,-1.5e+2]}"#, nil),
    ]

    static let duplicates: [HostileCase] = [
        payloadCase("sub twice", #"{"sub":"alice","sub":"bob"}"#, .duplicateClaim),
        payloadCase("the same claim twice with the same value", #"{"sub":"alice","sub":"alice"}"#, .duplicateClaim),
        payloadCase("exp twice", #"{"sub":"alice","exp":1,"exp":2}"#, .duplicateClaim),
        payloadCase("a duplicate in a nested object", #"{"sub":"alice","x":{"y":1,"y":2}}"#, .duplicateClaim),
        payloadCase("a duplicate in an object in an array", #"{"sub":"alice","x":[{"k":1,"k":1}]}"#, .duplicateClaim),
        payloadCase("a duplicate spelt with an escape", #"{"sub":"alice","s\u0075b":"bob"}"#, .duplicateClaim),
        payloadCase(
            "names equal only under Unicode normalisation",
            "{\"sub\":\"alice\",\"\u{E9}\":1,\"e\u{301}\":2}",
            .duplicateClaim
        ),
        HostileCase(
            "alg twice in the header",
            JWTFixture.make(header: #"{"alg":"HS256","alg":"none"}"#, payload: #"{"sub":"alice"}"#),
            .duplicateClaim
        ),
    ]

    static let utf8: [HostileCase] = [
        bytesCase("a 0xFF byte in a string", Array(#"{"sub":"al"#.utf8) + [0xFF] + Array(#"ice"}"#.utf8), .invalidUTF8),
        bytesCase("Latin-1 é", Array(#"{"sub":"Zo"#.utf8) + [0xEB] + Array(#""}"#.utf8), .invalidUTF8),
        bytesCase("an overlong '/'", Array(#"{"sub":"a"#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8), .invalidUTF8),
        bytesCase(
            "a UTF-8 encoded surrogate",
            Array(#"{"sub":"a"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
            .invalidUTF8
        ),
        bytesCase("a truncated sequence", Array(#"{"sub":"a"#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8), .invalidUTF8),
        bytesCase(
            "a code point over U+10FFFF",
            Array(#"{"sub":"a"#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),
            .invalidUTF8
        ),
        bytesCase("a stray byte outside strings", Array(#"{"sub":"alice"}"#.utf8) + [0x80], .invalidUTF8),
        bytesCase(
            "UTF-16",
            Array(#"{"sub":"alice"}"#.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            .invalidJSON
        ),
        HostileCase(
            "a non-UTF-8 header",
            "\(JWTFixture.segment(bytes: Array(#"{"alg":"HS"#.utf8) + [0xFE] + Array(#""}"#.utf8))).\(payload).\(signature)",
            .invalidUTF8
        ),
        payloadCase("valid UTF-8 beyond ASCII", #"{"sub":"Zoë 山田 😀"}"#, nil),
    ]

    @Test("JSON that is not an object is notAnObject", arguments: notObjects)
    func notAnObject(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("text that is not RFC 8259 JSON is invalidJSON", arguments: invalidJSON)
    func invalid(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("RFC 8259 JSON in all its corners is accepted", arguments: accepted)
    func valid(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("a member name twice at any depth is duplicateClaim", arguments: duplicates)
    func duplicate(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("bytes that are not UTF-8 are invalidUTF8", arguments: utf8)
    func notUTF8(_ hostile: HostileCase) {
        #expect(jwtDecodeFailure(hostile.token) == hostile.expected)
    }

    @Test("escapes decode to the characters they name")
    func escapes() throws {
        let jwt = try JWT(token: JWTFixture.make(payload: #"{"sub":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u0000"}"#))
        #expect(jwt.userId == "\"\\/\u{8}\u{C}\n\r\t\u{E9}\u{1F600}\u{0}")
    }

    @Test("nesting is limited to 64 levels; deeper input is invalidJSON, not a stack overflow")
    func depth() {
        func nested(_ levels: Int) -> String {
            #"{"sub":"alice","x":"# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                + "}"
        }
        #expect(jwtDecodeFailure(JWTFixture.make(payload: nested(63))) == nil)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: nested(64))) == .invalidJSON)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: nested(5000))) == .invalidJSON)
        let objects = String(repeating: #"{"a":"#, count: 1500) + "1" + String(repeating: "}", count: 1500)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: objects)) == .invalidJSON)
        let unclosed = #"{"sub":"alice","x":"# + String(repeating: "[", count: 10000)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: unclosed)) == .invalidJSON)
    }
}

@Suite("JWT hostile input: registered claims and the header")
struct JWTRegisteredClaimTests {
    static let numericDateClaims = ["exp", "nbf", "iat"]

    static let badDates: [(String, JWTError.Code)] = [
        (#""1300819380""#, .invalidClaim),
        (#""NaN""#, .invalidClaim),
        (#""Infinity""#, .invalidClaim),
        (#""2011-03-22T18:43:00Z""#, .invalidClaim),
        ("null", .invalidClaim),
        ("true", .invalidClaim),
        ("[1300819380]", .invalidClaim),
        (#"{"seconds":1}"#, .invalidClaim),
        ("-1", .invalidClaim),
        ("-0.5", .invalidClaim),
        ("-1e300", .invalidClaim),
        ("1e300", .invalidClaim),
        ("253402300800", .invalidClaim),
        ("9007199254740993", .invalidClaim),
        ("1e309", .invalidJSON),
        ("NaN", .invalidJSON),
        ("Infinity", .invalidJSON),
        ("-Infinity", .invalidJSON),
        ("nan", .invalidJSON),
        ("0x4D9A3F34", .invalidJSON),
    ]

    @Test("exp, nbf and iat must be NumericDate numbers within 1970...9999", arguments: numericDateClaims)
    func badNumericDates(_ claim: String) {
        for (value, code) in Self.badDates {
            #expect(jwtDecodeFailure(JWTFixture.withClaims(#""\#(claim)":\#(value)"#)) == code, "\(claim): \(value)")
        }
    }

    @Test(
        "exp, nbf and iat accept whole, fractional, zero and the largest year-9999 values",
        arguments: numericDateClaims
    )
    func goodNumericDates(_ claim: String) throws {
        let values: [(String, TimeInterval)] = [
            ("1300819380", 1_300_819_380), ("1300819380.75", 1_300_819_380.75), ("0", 0), ("-0", 0),
            ("1.3e9", 1_300_000_000), ("253402300799", 253_402_300_799),
        ]
        for (text, seconds) in values {
            let jwt = try JWT(token: JWTFixture.withClaims(#""\#(claim)":\#(text)"#))
            let date: Date? = jwt[claim]
            #expect(date == Date(timeIntervalSince1970: seconds), "\(claim): \(text)")
            let property = claim == "exp" ? jwt.expireDate : claim == "nbf" ? jwt.notBefore : jwt.issuedAt
            #expect(property == Date(timeIntervalSince1970: seconds), "\(claim): \(text)")
        }
    }

    @Test(
        "alg none in any letter case decodes with an empty signature and is reported unsecured",
        arguments: ["none", "NONE", "None", "nOnE", "noNE"]
    )
    func algNone(_ alg: String) throws {
        let token = JWTFixture.make(header: #"{"alg":"\#(alg)"}"#, payload: #"{"sub":"alice"}"#, signature: "")
        let jwt = try JWT(token: token)
        #expect(jwt.isUnsecured)
        #expect(jwt.header["alg"] == .string(alg))
        #expect(jwt.algorithm == alg)
    }

    @Test(
        "look-alikes of none are not unsecured, so they need a signature",
        arguments: ["none ", " none", "non", "nonee", "nonе", "ｎｏｎｅ", "no\\u0000ne", "NONE\u{301}"]
    )
    func noneLookAlikes(_ alg: String) throws {
        let header = #"{"alg":"\#(alg)"}"#
        #expect(
            jwtDecodeFailure(JWTFixture.make(header: header, payload: #"{"sub":"alice"}"#, signature: "")) == .malformed
        )
        let jwt = try JWT(token: JWTFixture.make(header: header, payload: #"{"sub":"alice"}"#))
        #expect(!jwt.isUnsecured)
    }

    @Test("a signed token is not unsecured")
    func signedIsSecured() throws {
        #expect(try !JWT(token: good).isUnsecured)
    }

    @Test("the header must carry alg as a string")
    func headerNeedsAlg() {
        for bad in ["{}", #"{"typ":"JWT"}"#, #"{"alg":1}"#, #"{"alg":null}"#, #"{"alg":["none"]}"#, #"{"ALG":"none"}"#]
        {
            #expect(
                jwtDecodeFailure(JWTFixture.make(header: bad, payload: #"{"sub":"alice"}"#)) == .invalidHeader,
                "\(bad)"
            )
        }
    }
}
