import CredentialVault
import Foundation
import Testing

@Suite("JWT descriptions never show the token")
struct JWTDescriptionTests {
    // Known segments, each long enough that finding one in a text cannot be chance.
    static let headerSegment = JWTFixture.segment(#"{"alg":"HS256","typ":"JWT","kid":"key-1"}"#)
    static let payloadSegment = JWTFixture.segment(
        #"{"sub":"alice","iss":"https://idp.example","exp":1700000000,"secret_claim":"hunter2-do-not-print"}"#
    )
    static let signatureSegment = JWTFixture.segment("a signature that must never be printed")
    static let token = "\(headerSegment).\(payloadSegment).\(signatureSegment)"
    static let secrets = [token, headerSegment, payloadSegment, signatureSegment, "hunter2-do-not-print"]

    func expectNoSecret(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in Self.secrets {
            #expect(!text.contains(secret), "leaks \(secret.prefix(8))…", sourceLocation: sourceLocation)
        }
    }

    @Test("description, debugDescription, interpolation and dump show sub and exp but no token text")
    func jwtDescriptions() throws {
        let jwt = try JWT(token: Self.token)
        #expect(jwt.description == #"JWT(sub: "alice", exp: 2023-11-14T22:13:20Z)"#)
        #expect(
            jwt.debugDescription
                == #"JWT(sub: "alice", iss: "https://idp.example", exp: 2023-11-14T22:13:20Z, alg: "HS256", claims: 4)"#
        )
        var dumped = ""
        dump(jwt, to: &dumped)
        for text in [jwt.description, jwt.debugDescription, "\(jwt)", String(reflecting: jwt), dumped, "\([jwt])"] {
            expectNoSecret(text)
        }
        #expect(dumped.contains("alice"))
    }

    @Test("a long or odd sub is quoted and cut in descriptions")
    func oddSubject() throws {
        let long = String(repeating: "x", count: 500)
        let jwt = try JWT(token: JWTFixture.make(payload: #"{"sub":"\#(long)\n\""}"#))
        #expect(jwt.description.count < 120)
        #expect(!jwt.description.contains("\n"))
    }

    /// Tokens built from the known segments that fail in every way the decoder knows.
    static var failingTokens: [String] {
        let h = headerSegment
        let p = payloadSegment
        let s = signatureSegment
        return [
            String(repeating: token, count: 200),
            "\(h).\(p)",
            "\(token).\(s)",
            ".\(p).\(s)",
            "\(h)..\(s)",
            "\(h).\(p).",
            "\(h)=.\(p).\(s)",
            "\(h).\(p) .\(s)",
            "\(h).\(p).\(s)==",
            "\(h).\(p).\(s)\n",
            "\(h).\(JWTFixture.segment("[1]")).\(s)",
            "\(h).\(JWTFixture.segment(#"{"sub":"a","sub":"b"}"#)).\(s)",
            "\(h).\(JWTFixture.segment(#"{"sub":1}"#)).\(s)",
            "\(h).\(JWTFixture.segment(#"{"exp":1}"#)).\(s)",
            "\(h).\(JWTFixture.segment(#"{"sub":"a","exp":"1"}"#)).\(s)",
            "\(h).\(JWTFixture.segment("{")).\(s)",
            "\(h).\(JWTFixture.segment(bytes: [0x7B, 0xFF, 0x7D])).\(s)",
            "\(JWTFixture.segment("{}")).\(p).\(s)",
            "\(JWTFixture.segment(#"{"alg":"none"}"#)).\(p).\(s)",
            "\(p).\(h).\(s)",
        ]
    }

    @Test("no error description contains the token or any of its segments")
    func errorDescriptions() {
        var codes: Set<JWTError.Code> = []
        for token in Self.failingTokens {
            do {
                _ = try JWT(token: token)
                Issue.record("decoded a token that should fail")
            } catch {
                codes.insert(error.code)
                var dumped = ""
                dump(error, to: &dumped)
                let texts = [
                    error.description, error.reason, "\(error)", String(reflecting: error), error.localizedDescription,
                    "\(error.code)", dumped,
                ]
                for text in texts { expectNoSecret(text) }
                #expect(error.description.contains(error.code.description))
            }
        }
        let expected: Set<JWTError.Code> = [
            .tooLong, .malformed, .invalidBase64, .invalidUTF8, .invalidJSON, .notAnObject, .duplicateClaim,
            .invalidHeader, .invalidClaim, .missingSubject,
        ]
        #expect(codes == expected)
    }

    @Test("errors match by code; the reason is for people")
    func errorMatching() {
        let error = JWTError(.malformed, "one reason")
        #expect(error == JWTError(.malformed, "another reason"))
        #expect(error != JWTError(.tooLong, "one reason"))
        #expect(error.code == .malformed)
        #expect(error.description.hasPrefix("JWT malformed: one reason; "))
    }
}
