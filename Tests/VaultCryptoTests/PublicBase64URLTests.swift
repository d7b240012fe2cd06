import Foundation
import Testing
import VaultCrypto

/// The table-driven base64url for public bytes against libsodium's constant-time code (``Base64URL``), an independent
/// implementation of the same strict rules; the RFC vectors and refusals for both are in `Base64Tests`.
@Suite("PublicBase64URL: base64url for bytes that are not secret")
struct PublicBase64URLTests {
    @Test("a random byte string of each length from 0 to 300 encodes as libsodium encodes it, and decodes back")
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
