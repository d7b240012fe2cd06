import Testing

@testable import CredentialVault

@Suite("store file names: the user id's SHA-256 in hex and the kind")
struct StoreFileTests {
    /// FIPS 180-2, appendix B.1: SHA-256("abc").
    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    /// FIPS 180-2, appendix B.2: SHA-256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").
    static let long = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"

    @Test("each user's names, asked in turn (the last hash is kept), are its own hash's")
    func names() {
        for _ in 0..<2 {
            #expect(StoreFile.envelope.name(userId: "abc") == "\(Self.abc).vault")
            #expect(StoreFile.attempts.name(userId: "abc") == "\(Self.abc).attempts")
            let user = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            #expect(StoreFile.device.name(userId: user) == "\(Self.long).device")
            #expect(StoreFile.envelope.name(userId: user) == "\(Self.long).vault")
        }
    }

    @Test("two ids Swift's == takes as equal (é as one code point and as two) name different files, asked in turn")
    func canonicallyEquivalentIds() {
        let composed = "ren\u{E9}"
        let decomposed = "rene\u{301}"
        #expect(composed == decomposed)
        for _ in 0..<2 {
            let first = StoreFile.envelope.name(userId: composed)
            let second = StoreFile.envelope.name(userId: decomposed)
            #expect(first != second)
            #expect(first == StoreFile.envelope.name(userId: composed))
        }
    }
}
