import Foundation
import Testing

@testable import VaultCrypto

@Suite("libsodium status codes")
struct SodiumTests {
    @Test("a failing status becomes the error asked for; success passes")
    func check() throws {
        #expect(throws: CryptoError(.keyDerivationFailed, "")) {
            try Sodium.check(-1, .keyDerivationFailed, "out of memory")
        }
        #expect {
            try Sodium.check(-1, .invalidLength, "the reason")
        } throws: { error in
            (error as? CryptoError)?.reason == "the reason"
        }
        try Sodium.check(0, .invalidLength, "never thrown")
    }

    @Test("a call libsodium fails is thrown with the failure's reason, not ignored")
    func failureThroughTheAPI() throws {
        let key = XChaCha20Poly1305.generateKey()
        let box = try XChaCha20Poly1305.seal(SecureBytes(Data("secret".utf8)), key: key)
        // A box of valid shape under the wrong key passes every check before libsodium's decrypt.
        #expect {
            try XChaCha20Poly1305.open(box, key: XChaCha20Poly1305.generateKey())
        } throws: { error in
            (error as? CryptoError)?.code == .authenticationFailed
                && (error as? CryptoError)?.reason.contains("wrong key") == true
        }
        // "Zh" has non-zero trailing bits, which only libsodium's decoder checks.
        #expect(throws: CryptoError(.invalidEncoding, "")) { try Base64URL.decode("Zh") }
    }
}
