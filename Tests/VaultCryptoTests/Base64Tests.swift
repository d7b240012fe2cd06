import Foundation
import Testing
import VaultCrypto

@Suite("strict base64url (constant-time and for public bytes) and base64")
struct Base64Tests {
    @Test("RFC 7515 appendix C: [3, 236, 255, 224, 193] is \"A-z_4ME\"")
    func rfc7515AppendixC() throws {
        let bytes = Data([3, 236, 255, 224, 193])
        #expect(Base64URL.encode(bytes) == "A-z_4ME")
        #expect(try Base64URL.decode("A-z_4ME") == bytes)
        #expect(PublicBase64URL.encode(bytes) == "A-z_4ME")
        #expect(try PublicBase64URL.decode("A-z_4ME") == bytes)
    }

    // RFC 4648 section 10, in the unpadded URL-safe form RFC 7515 section 2 asks for.
    @Test(
        "RFC 4648 section 10 vectors, unpadded",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
    )
    func rfc4648(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Data(plain.utf8))
        #expect(PublicBase64URL.encode(Data(plain.utf8)) == encoded)
        #expect(try PublicBase64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test(
        "non-canonical base64url is rejected",
        arguments: [
            "Zg==",  // padding
            "Zm9vYmFy=",  // padding on a full block
            "A+z/4ME",  // the standard alphabet
            "Zm9v Zm9v",  // whitespace
            "Zm9v\n",  // a trailing newline
            "Zm9vY",  // length 1 mod 4
            "A-z_4MF",  // non-zero trailing bits
            "Zh",  // non-zero trailing bits
            "Zm9\u{0}",  // NUL
            "Zm9v\u{E9}",  // non-ASCII
            "eT\u{E9}",  // non-ASCII where the length would do: libsodium 1.0.18 took each byte for '_'
            "\u{E9}QN",
            "Zm9vYmF\u{FF}",
        ]
    )
    func rejectsNonCanonical(text: String) {
        #expect(throws: CryptoError(.invalidEncoding, "")) { try Base64URL.decode(text) }
        #expect(throws: CryptoError(.invalidEncoding, "")) { try PublicBase64URL.decode(text) }
    }

    @Test("random byte strings round-trip through base64url")
    func roundTrip() throws {
        for length in 0..<80 {
            let bytes = SecureRandom.bytes(count: length)
            #expect(try Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test("standard base64 needs padding and its own alphabet")
    func standard() throws {
        #expect(Base64.encode(Data([3, 236, 255, 224, 193])) == "A+z/4ME=")
        #expect(try Base64.decode("A+z/4ME=") == Data([3, 236, 255, 224, 193]))
        #expect(throws: CryptoError.self) { try Base64.decode("A+z/4ME") }
        #expect(throws: CryptoError.self) { try Base64.decode("A-z_4ME=") }
        #expect(throws: CryptoError.self) { try Base64.decode("eT\u{E9}") }
    }
}
