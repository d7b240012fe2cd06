import Foundation
import Testing

@testable import CredentialVault

/// `expires_in` is a server's hint, taken within sane bounds: never negative, at most a year, and a value
/// that is not a finite number is no hint at all (the access token's own `exp` decides, or it is refreshed
/// at every use). None of them makes the token answer unusable.
@Suite("expires_in is clamped")
struct ExpiresInTests {
    static let year: TimeInterval = 365 * 24 * 60 * 60

    static func lifetime(_ expiresIn: String) throws -> TimeInterval? {
        let body = #"{"access_token":"a.b.c","token_type":"Bearer","expires_in":\#(expiresIn)}"#
        let answer = try #require(TokenEndpoint.tokenResponse(from: Data(body.utf8)))
        return answer.expiresIn
    }

    @Test(
        "a number in range is taken as it is, a number in a string too",
        arguments: [("300", 300), ("0", 0), ("3600.5", 3600.5), (#""3600""#, 3600), ("31536000", year)]
            as [(String, TimeInterval)]
    )
    func inRange(expiresIn: String, seconds: TimeInterval) throws {
        #expect(try Self.lifetime(expiresIn) == seconds)
    }

    @Test("a negative value is 0: the access token counts as expired at once", arguments: ["-5", "-1e300", #""-5""#])
    func negative(expiresIn: String) throws {
        #expect(try Self.lifetime(expiresIn) == 0)
    }

    @Test("a value over a year is a year", arguments: ["1e300", "31536001", "9223372036854775807", #""1e300""#])
    func huge(expiresIn: String) throws {
        #expect(try Self.lifetime(expiresIn) == Self.year)
    }

    @Test(
        "a value that is not a finite number is no hint, and the answer is still used",
        arguments: [#""NaN""#, #""nan""#, #""Infinity""#, #""-inf""#, #""soon""#, "true", "null", "{}", "[]"]
    )
    func notANumber(expiresIn: String) throws {
        #expect(try Self.lifetime(expiresIn) == nil)
    }

    @Test("an absent expires_in is no hint")
    func absent() throws {
        let answer = try #require(TokenEndpoint.tokenResponse(from: Data(#"{"access_token":"a.b.c"}"#.utf8)))
        #expect(answer.expiresIn == nil)
    }

    @Test(
        "the token answer's shape: refresh_token and id_token strings when present, null as absent; else no answer",
        arguments: [
            (#"{"access_token":"a","refresh_token":"r","id_token":"i"}"#, "r", "i"),
            (#"{"access_token":"a","refresh_token":null,"id_token":null}"#, nil, nil),
            (#"{"access_token":"a","refresh_token":""}"#, nil, nil),
            ("\u{FEFF}" + #"{"access_token":"a","refresh_token":"r"}"#, "r", nil),
        ] as [(String, String?, String?)]
    )
    func shape(body: String, refreshToken: String?, idToken: String?) throws {
        let answer = try #require(TokenEndpoint.tokenResponse(from: Data(body.utf8)))
        #expect(answer.accessToken == "a")
        #expect(answer.refreshToken == refreshToken)
        #expect(answer.idToken == idToken)
    }

    @Test(
        "no token answer: no access token, an empty one, a refresh_token or id_token not a string, a repeated name",
        arguments: [
            #"{"token_type":"Bearer"}"#, #"{"access_token":""}"#, #"{"access_token":5}"#,
            #"{"access_token":"a","refresh_token":5}"#, #"{"access_token":"a","id_token":{}}"#,
            #"{"access_token":"a","access_token":"b"}"#, #"{"access_token":"a","scope":"x","scope":"y"}"#, "[]",
        ]
    )
    func notAnAnswer(body: String) {
        #expect(TokenEndpoint.tokenResponse(from: Data(body.utf8)) == nil)
    }
}
