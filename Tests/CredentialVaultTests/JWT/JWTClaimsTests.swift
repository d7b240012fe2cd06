import CredentialVault
import Foundation
import Testing

@Suite("JWT claims: typed properties and the subscript")
struct JWTClaimsTests {
    static let payload = #"""
        {"sub":"user-42","iss":"https://idp.example/auth/realms/demo","exp":1700003600.25,"nbf":1699999990,
         "iat":1700000000,"login_provider":"TIM","aud":["app","api"],"scope":"openid  profile email",
         "name":"Zoë 😀","age":42,"ratio":0.5,"admin":true,"roles":["a","b"],"mixed":["a",1],
         "address":{"city":"Aarhus","zip":8000},"updated":1700000000,"nothing":null,"big":1e300,
         "escaped":"\ud83d\ude00\n\u00e9"}
        """#

    let jwt: JWT

    init() throws {
        jwt = try JWT(token: JWTFixture.make(payload: Self.payload))
    }

    @Test("registered claims come out typed")
    func registeredClaims() {
        #expect(jwt.userId == "user-42")
        #expect(jwt.issuer == "https://idp.example/auth/realms/demo")
        #expect(jwt.expireDate == Date(timeIntervalSince1970: 1_700_003_600.25))
        #expect(jwt.notBefore == Date(timeIntervalSince1970: 1_699_999_990))
        #expect(jwt.issuedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(jwt.loginProvider == "TIM")
        #expect(jwt.audience == ["app", "api"])
        #expect(jwt.scope == ["openid", "profile", "email"])
        #expect(jwt.algorithm == "HS256")
        #expect(jwt.header == ["alg": "HS256", "typ": "JWT"])
        #expect(jwt.claims.count == 19)
    }

    @Test("the subscript gives String, Int, Double, Bool, Date, [String] and nested objects")
    func subscriptTypes() {
        #expect(jwt["name"] == "Zoë 😀")
        #expect(jwt["escaped"] == "😀\né")
        #expect(jwt["age"] == 42)
        #expect(jwt["age"] == 42.0)
        #expect(jwt["ratio"] == 0.5)
        #expect(jwt["admin"] == true)
        #expect(jwt["updated"] == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(jwt["roles"] == ["a", "b"])
        let address: [String: JSONValue]? = jwt["address"]
        #expect(address == ["city": "Aarhus", "zip": 8000])
        let nested: JSONValue? = jwt["address"]
        #expect(nested?["city"]?.stringValue == "Aarhus")
        let raw: JSONValue? = jwt["nothing"]
        #expect(raw == .null)
        let elements: [JSONValue]? = jwt["mixed"]
        #expect(elements == ["a", 1])
    }

    @Test("the subscript gives nil on a type mismatch or a missing claim")
    func subscriptMismatch() {
        let notString: String? = jwt["age"]
        let notInt: Int? = jwt["ratio"]
        let hugeInt: Int? = jwt["big"]
        let hugeDate: Date? = jwt["big"]
        let notBool: Bool? = jwt["name"]
        let notStrings: [String]? = jwt["mixed"]
        let notObject: [String: JSONValue]? = jwt["roles"]
        let missing: String? = jwt["absent"]
        let nullString: String? = jwt["nothing"]
        let unsupported: Float? = jwt["ratio"]
        #expect(notString == nil)
        #expect(notInt == nil)
        #expect(hugeInt == nil)
        #expect(hugeDate == nil)
        #expect(notBool == nil)
        #expect(notStrings == nil)
        #expect(notObject == nil)
        #expect(missing == nil)
        #expect(nullString == nil)
        #expect(unsupported == nil)
    }

    @Test("absent optional claims give nil or an empty list")
    func absentClaims() throws {
        let minimal = try JWT(token: JWTFixture.withClaims(""))
        #expect(minimal.userId == "alice")
        #expect(minimal.issuer == nil)
        #expect(minimal.expireDate == nil)
        #expect(minimal.issuedAt == nil)
        #expect(minimal.notBefore == nil)
        #expect(minimal.loginProvider == nil)
        #expect(minimal.audience == [])
        #expect(minimal.scope == [])
    }

    @Test("aud as a string, an array or an empty array; anything else is invalidClaim")
    func audienceShapes() throws {
        #expect(try JWT(token: JWTFixture.withClaims(#""aud":"app""#)).audience == ["app"])
        #expect(try JWT(token: JWTFixture.withClaims(#""aud":["app","api"]"#)).audience == ["app", "api"])
        #expect(try JWT(token: JWTFixture.withClaims(#""aud":[]"#)).audience == [])
        for bad in [#""aud":1"#, #""aud":["app",1]"#, #""aud":{}"#, #""aud":null"#, #""aud":true"#, #""aud":[["a"]]"#] {
            #expect(jwtDecodeFailure(JWTFixture.withClaims(bad)) == .invalidClaim, "\(bad)")
        }
    }

    @Test("scope as a space-separated string or an array of strings; anything else is invalidClaim")
    func scopeShapes() throws {
        #expect(try JWT(token: JWTFixture.withClaims(#""scope":" a  b ""#)).scope == ["a", "b"])
        #expect(try JWT(token: JWTFixture.withClaims(#""scope":"""#)).scope == [])
        #expect(try JWT(token: JWTFixture.withClaims(#""scope":["a","b c"]"#)).scope == ["a", "b c"])
        for bad in [#""scope":1"#, #""scope":[1]"#, #""scope":null"#, #""scope":{"a":"b"}"#] {
            #expect(jwtDecodeFailure(JWTFixture.withClaims(bad)) == .invalidClaim, "\(bad)")
        }
    }

    @Test("sub is required, a non-empty string")
    func subjectRules() {
        #expect(jwtDecodeFailure(JWTFixture.make(payload: "{}")) == .missingSubject)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: #"{"iss":"joe"}"#)) == .missingSubject)
        #expect(jwtDecodeFailure(JWTFixture.make(payload: #"{"sub":""}"#)) == .missingSubject)
        for bad in ["1", "null", "true", #"["alice"]"#, #"{"id":"alice"}"#] {
            #expect(jwtDecodeFailure(JWTFixture.make(payload: #"{"sub":\#(bad)}"#)) == .invalidClaim, "\(bad)")
        }
    }

    @Test("iss and login_provider must be strings when present")
    func stringClaims() {
        #expect(jwtDecodeFailure(JWTFixture.withClaims(#""iss":1"#)) == .invalidClaim)
        #expect(jwtDecodeFailure(JWTFixture.withClaims(#""iss":null"#)) == .invalidClaim)
        #expect(jwtDecodeFailure(JWTFixture.withClaims(#""login_provider":["TIM"]"#)) == .invalidClaim)
    }

    @Test("JWTs are equal and hash alike exactly when their tokens are")
    func equality() throws {
        let same = try JWT(token: jwt.token)
        let other = try JWT(token: JWTFixture.withClaims(""))
        #expect(same == jwt)
        #expect(other != jwt)
        #expect(Set([jwt, same, other]).count == 2)
    }
}

@Suite("JWT expiry and not-before, with an injected clock")
struct JWTExpiryTests {
    static let exp: TimeInterval = 1_700_000_000

    func at(_ offset: TimeInterval) -> Date { Date(timeIntervalSince1970: Self.exp + offset) }

    @Test("a token is expired from exp on, not before")
    func expiresAtExp() throws {
        let jwt = try JWT(token: JWTFixture.withClaims(#""exp":1700000000"#))
        #expect(!jwt.isExpired(now: at(-1)))
        #expect(!jwt.isExpired(now: at(-0.001)))
        #expect(jwt.isExpired(now: at(0)))
        #expect(jwt.isExpired(now: at(1)))
    }

    @Test("a positive leeway extends life; a negative leeway reports expiry early")
    func leeway() throws {
        let jwt = try JWT(token: JWTFixture.withClaims(#""exp":1700000000"#))
        #expect(!jwt.isExpired(leeway: 5, now: at(4)))
        #expect(jwt.isExpired(leeway: 5, now: at(5)))
        #expect(jwt.isExpired(leeway: -30, now: at(-30)))
        #expect(!jwt.isExpired(leeway: -30, now: at(-31)))
    }

    @Test("fractional exp is kept to the fraction")
    func fractionalExp() throws {
        let jwt = try JWT(token: JWTFixture.withClaims(#""exp":1700000000.5"#))
        #expect(!jwt.isExpired(now: at(0.4)))
        #expect(jwt.isExpired(now: at(0.5)))
    }

    @Test("a token without exp never expires")
    func noExp() throws {
        let jwt = try JWT(token: JWTFixture.withClaims(""))
        #expect(!jwt.isExpired(now: .distantFuture))
        #expect(!jwt.isExpired(leeway: -1e12, now: .distantFuture))
    }

    @Test("a token is not yet valid before nbf minus leeway")
    func notBefore() throws {
        let jwt = try JWT(token: JWTFixture.withClaims(#""nbf":1700000000"#))
        #expect(jwt.isNotYetValid(now: at(-1)))
        #expect(!jwt.isNotYetValid(now: at(0)))
        #expect(!jwt.isNotYetValid(leeway: 10, now: at(-10)))
        #expect(jwt.isNotYetValid(leeway: 10, now: at(-11)))
        #expect(try !JWT(token: JWTFixture.withClaims("")).isNotYetValid(now: .distantPast))
    }
}

@Suite("JSONValue accessors and literals")
struct JSONValueTests {
    @Test("each accessor answers only for its own kind")
    func accessors() {
        let value: JSONValue = ["s": "text", "n": 1.5, "i": 3, "b": false, "a": ["x", "y"], "o": ["k": .null]]
        #expect(value["s"]?.stringValue == "text")
        #expect(value["n"]?.doubleValue == 1.5)
        #expect(value["n"]?.intValue == nil)
        #expect(value["i"]?.intValue == 3)
        #expect(value["b"]?.boolValue == false)
        #expect(value["a"]?.stringArrayValue == ["x", "y"])
        #expect(value["a"]?.arrayValue?.count == 2)
        #expect(value["o"]?["k"]?.isNull == true)
        #expect(value["s"]?.doubleValue == nil)
        #expect(value["s"]?["k"] == nil)
        #expect(value.arrayValue == nil)
        #expect(value.objectValue?.count == 6)
        #expect(JSONValue.number(1e300).intValue == nil)
        #expect(JSONValue.number(-1).dateValue == nil)
        #expect(JSONValue.number(0).dateValue == Date(timeIntervalSince1970: 0))
    }
}
