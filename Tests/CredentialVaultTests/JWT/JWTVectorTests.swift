import CredentialVault
import Foundation
import Testing

@Suite("JWT known answers (RFC 7515 A.1, RFC 7519 6.1)")
struct JWTVectorTests {
    @Test("RFC 7515 A.1 decodes to its header and claims, CRLFs and all")
    func rfc7515A1() throws {
        let vector = try #require(try JWTVectors.jwt()["rfc7515-a1"])
        #expect(vector.source.hasPrefix("RFC 7515"))
        let (header, claims) = try JWT.decodeSegments(vector.token)
        #expect(header == ["typ": "JWT", "alg": "HS256"])
        #expect(header["alg"] == .string(vector.alg))
        #expect(header["typ"]?.stringValue == vector.typ)
        #expect(claims == ["iss": "joe", "exp": 1_300_819_380, "http://example.com/is_root": true])
        #expect(claims["iss"]?.stringValue == vector.iss)
        #expect(claims["exp"]?.doubleValue == vector.exp)
        #expect(claims["exp"]?.dateValue == Date(timeIntervalSince1970: 1_300_819_380))
        #expect(claims["http://example.com/is_root"]?.boolValue == vector.isRoot)
    }

    @Test("RFC 7519 6.1 unsecured JWT decodes: empty signature, alg none")
    func rfc7519Section6_1() throws {
        let vector = try #require(try JWTVectors.jwt()["rfc7519-6.1"])
        #expect(vector.source.hasPrefix("RFC 7519"))
        #expect(vector.token.hasSuffix("."))
        let (header, claims) = try JWT.decodeSegments(vector.token)
        #expect(header == ["alg": .string(vector.alg)])
        #expect(claims["iss"]?.stringValue == vector.iss)
        #expect(claims["exp"]?.doubleValue == vector.exp)
        #expect(claims["http://example.com/is_root"]?.boolValue == vector.isRoot)
    }

    @Test("the vectors' segments decode to the exact JSON text the RFCs print")
    func segmentsMatchRFCText() throws {
        for (_, vector) in try JWTVectors.jwt() {
            let parts = vector.token.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 3)
            #expect(JWTFixture.segment(vector.headerJSON) == String(parts[0]))
            #expect(JWTFixture.segment(vector.payloadJSON) == String(parts[1]))
        }
    }

    @Test("a JWT needs sub: both RFC examples, which have none, are refused with missingSubject")
    func rfcExamplesLackSubject() throws {
        for (_, vector) in try JWTVectors.jwt() {
            #expect(jwtDecodeFailure(vector.token) == .missingSubject)
        }
    }

    @Test("the RFC 7515 A.1 header and claims with a sub added give every typed property")
    func rfcClaimsWithSubject() throws {
        let vector = try #require(try JWTVectors.jwt()["rfc7515-a1"])
        let payload = vector.payloadJSON.replacingOccurrences(of: #"{"iss""#, with: #"{"sub":"joe","iss""#)
        let jwt = try JWT(token: JWTFixture.make(header: vector.headerJSON, payload: payload))
        #expect(jwt.userId == "joe")
        #expect(jwt.issuer == "joe")
        #expect(jwt.expireDate == Date(timeIntervalSince1970: vector.exp))
        #expect(jwt["http://example.com/is_root"] == true)
        #expect(jwt.header["alg"] == "HS256")
        #expect(!jwt.isUnsecured)
        #expect(jwt.isExpired(now: Date(timeIntervalSince1970: vector.exp)))
        #expect(!jwt.isExpired(now: Date(timeIntervalSince1970: vector.exp - 1)))
    }
}
