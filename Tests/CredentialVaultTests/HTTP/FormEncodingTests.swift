import Testing

@testable import CredentialVault

@Suite("application/x-www-form-urlencoded")
struct FormEncodingTests {
    // RFC 6749 appendix B: the value " %&+£€" is "+%25%26%2B%C2%A3%E2%82%AC"; this encoding writes the space as
    // %20, which form decoders read the same way. The other answers are Python 3's
    // `urllib.parse.quote(value, safe='-._~')`, an independent implementation of the same rule.
    @Test(
        "each UTF-8 byte outside the unreserved set is percent-encoded",
        arguments: [
            (" %&+£€", "%20%25%26%2B%C2%A3%E2%82%AC"),
            (
                "Aa0-._~/?#[]@!$'()*,;=:\n\u{E9}\u{1F600}",
                "Aa0-._~%2F%3F%23%5B%5D%40%21%24%27%28%29%2A%2C%3B%3D%3A%0A%C3%A9%F0%9F%98%80"
            ),
            ("", ""),
        ]
    )
    func escape(value: String, expected: String) {
        #expect(FormEncoding.escape(value) == expected)
    }

    @Test("fields are joined in the order of their names")
    func encode() {
        let encoded = FormEncoding.encode(["refresh_token": "a b", "grant_type": "refresh_token", "client_id": "c&d"])
        #expect(encoded == "client_id=c%26d&grant_type=refresh_token&refresh_token=a%20b")
    }
}
