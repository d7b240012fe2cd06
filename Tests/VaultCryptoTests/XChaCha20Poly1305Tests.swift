import Foundation
import Testing

@testable import VaultCrypto

@Suite("XChaCha20-Poly1305")
struct XChaCha20Poly1305Tests {
    struct Vector: Decodable {
        let source: String
        let plaintextUTF8: String
        let aadHex: String
        let keyHex: String
        let nonceHex: String
        let ciphertextHex: String
        let tagHex: String
    }

    let vector: Vector

    init() throws {
        vector = try Vectors.load("xchacha20poly1305.json", as: Vector.self)
    }

    @Test("sealing the draft-irtf-cfrg-xchacha A.3.1 input gives its ciphertext and tag")
    func knownAnswerSeal() throws {
        let box = try XChaCha20Poly1305.seal(
            SecureBytes(Data(vector.plaintextUTF8.utf8)),
            key: SecureBytes(Data(hex: vector.keyHex)),
            nonce: Data(hex: vector.nonceHex),
            associatedData: Data(hex: vector.aadHex)
        )
        #expect(box.ciphertext.hex == vector.ciphertextHex + vector.tagHex)
    }

    @Test("opening the A.3.1 ciphertext gives its plaintext")
    func knownAnswerOpen() throws {
        let box = XChaCha20Poly1305.SealedBox(
            nonce: Data(hex: vector.nonceHex),
            ciphertext: Data(hex: vector.ciphertextHex + vector.tagHex)
        )
        let opened = try XChaCha20Poly1305.open(
            box,
            key: SecureBytes(Data(hex: vector.keyHex)),
            associatedData: Data(hex: vector.aadHex)
        )
        #expect(opened.utf8String() == vector.plaintextUTF8)
    }

    @Test("every single-bit flip of nonce, ciphertext, tag or associated data fails to open")
    func everyBitFlipFails() throws {
        let key = XChaCha20Poly1305.generateKey()
        let associatedData = Data("credential-vault/v1|user|key".utf8)
        let box = try XChaCha20Poly1305.seal(
            SecureBytes(Data("a refresh token".utf8)),
            key: key,
            associatedData: associatedData
        )
        var attempts = 0

        func expectRejected(_ candidate: XChaCha20Poly1305.SealedBox, _ ad: Data) {
            attempts += 1
            #expect(throws: CryptoError(.authenticationFailed, "")) {
                try XChaCha20Poly1305.open(candidate, key: key, associatedData: ad)
            }
        }
        for bit in 0..<(box.nonce.count * 8) {
            expectRejected(.init(nonce: box.nonce.flippingBit(bit), ciphertext: box.ciphertext), associatedData)
        }
        // The ciphertext field holds the encrypted bytes followed by the tag: both are covered here.
        for bit in 0..<(box.ciphertext.count * 8) {
            expectRejected(.init(nonce: box.nonce, ciphertext: box.ciphertext.flippingBit(bit)), associatedData)
        }
        for bit in 0..<(associatedData.count * 8) {
            expectRejected(box, associatedData.flippingBit(bit))
        }
        #expect(attempts == (24 + 15 + 16 + associatedData.count) * 8)
        // The unmodified box still opens, so the failures above are the flips' doing.
        #expect(
            try XChaCha20Poly1305.open(box, key: key, associatedData: associatedData).utf8String() == "a refresh token"
        )
    }

    @Test("a wrong key, a truncated box or a missing associated data fails to open")
    func otherTampering() throws {
        let key = XChaCha20Poly1305.generateKey()
        let box = try XChaCha20Poly1305.seal(
            SecureBytes(Data("secret".utf8)),
            key: key,
            associatedData: Data("ad".utf8)
        )
        #expect(throws: CryptoError.self) {
            try XChaCha20Poly1305.open(box, key: XChaCha20Poly1305.generateKey(), associatedData: Data("ad".utf8))
        }
        #expect(throws: CryptoError.self) {
            try XChaCha20Poly1305.open(
                .init(nonce: box.nonce, ciphertext: box.ciphertext.dropLast()),
                key: key,
                associatedData: Data("ad".utf8)
            )
        }
        #expect(throws: CryptoError.self) {
            try XChaCha20Poly1305.open(
                .init(nonce: box.nonce, ciphertext: Data()),
                key: key,
                associatedData: Data("ad".utf8)
            )
        }
        #expect(throws: CryptoError.self) { try XChaCha20Poly1305.open(box, key: key) }
    }

    @Test("two seals of the same plaintext use different nonces")
    func noncesAreFresh() throws {
        let key = XChaCha20Poly1305.generateKey()
        let plaintext = SecureBytes(Data("same".utf8))
        let first = try XChaCha20Poly1305.seal(plaintext, key: key)
        let second = try XChaCha20Poly1305.seal(plaintext, key: key)
        #expect(first.nonce != second.nonce)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test("keys that are not 32 bytes are refused")
    func keyLength() {
        #expect(throws: CryptoError(.invalidLength, "")) {
            try XChaCha20Poly1305.seal(SecureBytes([1]), key: SecureBytes(Data(count: 16)))
        }
    }
}

extension Data {
    func flippingBit(_ bit: Int) -> Data {
        var copy = self
        copy[copy.startIndex + bit / 8] ^= UInt8(1 << (bit % 8))
        return copy
    }
}
