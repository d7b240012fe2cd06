import Foundation
import Testing
import VaultCrypto

/// The table-driven base64url for public bytes against the RFC vectors and against libsodium's constant-time code
/// (``Base64URL``), an independent implementation of the same strict rules.
@Suite("PublicBase64URL: base64url for bytes that are not secret")
struct PublicBase64URLTests {
    @Test("RFC 7515 appendix C: [3, 236, 255, 224, 193] is \"A-z_4ME\"")
    func rfc7515AppendixC() throws {
        let bytes = Data([3, 236, 255, 224, 193])
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
        #expect(PublicBase64URL.encode(Data(plain.utf8)) == encoded)
        #expect(try PublicBase64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test(
        "non-canonical base64url is rejected",
        arguments: [
            "Zg==", "Zm9vYmFy=", "A+z/4ME", "Zm9v Zm9v", "Zm9v\n", "Zm9vY", "A-z_4MF", "Zh", "Zm9\u{0}", "Zm9v\u{E9}",
            "Zm9vYmF\u{FF}",
            "eT\u{E9}",  // a byte outside ASCII where the length would do: libsodium 1.0.18 took it for '_'
            "\u{E9}QN",
        ]
    )
    func rejectsNonCanonical(text: String) {
        #expect(throws: CryptoError(.invalidEncoding, "")) { try PublicBase64URL.decode(text) }
        #expect(throws: CryptoError(.invalidEncoding, "")) { try Base64URL.decode(text) }
    }

    @Test("every byte string of up to 300 bytes encodes as libsodium encodes it, and decodes back")
    func encodesAsLibsodium() throws {
        for length in 0...300 {
            let bytes = SecureRandom.bytes(count: length)
            let text = PublicBase64URL.encode(bytes)
            #expect(text == Base64URL.encode(bytes), "\(length) bytes")
            #expect(try PublicBase64URL.decode(text) == bytes)
        }
    }

    @Test("random short texts, in and out of the alphabet: accepted and refused as libsodium does, to the same bytes")
    func decodesAsLibsodium() {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_AQgw+/= \n\u{0}\u{E9}.")
        var generator = SystemRandomNumberGenerator()
        var disagreements: [String] = []
        var accepted = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...9, using: &generator)
            let text = String((0..<length).map { _ in characters.randomElement(using: &generator)! })
            let table = try? PublicBase64URL.decode(text)
            let sodium = try? Base64URL.decode(text)
            if table != sodium { disagreements.append(text.debugDescription) }
            if sodium != nil { accepted += 1 }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
        // Both outcomes were tried many times: the comparison was not all refusals.
        #expect(accepted > 1_000)
        #expect(accepted < 19_000)
    }
}
