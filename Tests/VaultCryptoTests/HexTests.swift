import Testing
import VaultCrypto

@Suite("lower-case hex")
struct HexTests {
    // RFC 4648 section 10, base16, lower-cased.
    @Test(
        "RFC 4648 section 10 base16 vectors, lower-case",
        arguments: [
            ("", ""), ("f", "66"), ("fo", "666f"), ("foo", "666f6f"), ("foob", "666f6f62"), ("fooba", "666f6f6261"),
            ("foobar", "666f6f626172"),
        ]
    )
    func rfc4648(plain: String, encoded: String) {
        #expect(Hex.encode(plain.utf8) == encoded)
        #expect(Hex.encode(Array(plain.utf8)) == encoded)
    }

    @Test("every byte value is two lower-case digits")
    func everyByte() {
        let text = Hex.encode(0...255 as ClosedRange<UInt8>)
        #expect(text.count == 512)
        #expect(text.hasPrefix("000102"))
        #expect(text.hasSuffix("fdfeff"))
        #expect(text.allSatisfy { "0123456789abcdef".contains($0) })
    }
}
