import Foundation
import Testing
import VaultCrypto

@Suite("SecureBytes")
struct SecureBytesTests {
    @Test("description and debugDescription never show the content")
    func redacted() {
        let secret = SecureBytes(Data("hunter2-correct-horse".utf8))
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains(secret.base64EncodedString()))
            #expect(text.contains("21 bytes"))
        }
    }

    @Test("equality compares contents")
    func equality() {
        #expect(SecureBytes([1, 2, 3]) == SecureBytes([1, 2, 3]))
        #expect(SecureBytes([1, 2, 3]) != SecureBytes([1, 2, 4]))
        #expect(SecureBytes([1, 2, 3]) != SecureBytes([1, 2]))
        #expect(SecureBytes([UInt8]()) == SecureBytes([UInt8]()))
    }

    @Test("slices and concatenation copy the right bytes")
    func sliceAndAppend() {
        let bytes = SecureBytes(Array(0..<64) as [UInt8])
        #expect(bytes.slice(0..<32).copyToData() == Data(0..<32))
        #expect(bytes.slice(32..<64).copyToData() == Data(32..<64))
        #expect(bytes.slice(0..<32).appending(bytes.slice(32..<64)) == bytes)
    }

    @Test("random buffers differ and have the asked length")
    func random() {
        let a = SecureBytes.random(count: 32)
        let b = SecureBytes.random(count: 32)
        #expect(a.count == 32)
        #expect(a != b)
    }

    @Test("standard base64 decodes into a secure buffer, strictly")
    func base64() throws {
        #expect(try SecureBytes(base64Encoded: "AQID").copyToData() == Data([1, 2, 3]))
        #expect(throws: CryptoError.self) { try SecureBytes(base64Encoded: "AQID!") }
    }
}

@Suite("keyed BLAKE2b, SHA-256 and Ed25519")
struct PrimitivesTests {
    // The BLAKE2 reference KAT, blake2b-kat.txt: key 00..3f, inputs "" and 00.
    @Test("keyed BLAKE2b-512 matches the BLAKE2 reference KAT")
    func blake2bKAT() throws {
        let key = SecureBytes(Array(0..<64) as [UInt8])
        let empty = try BLAKE2b.keyedHash(key: key, domain: "", message: Data(), outputLength: 64)
        #expect(
            empty.copyToData().hex
                == "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"
        )
        let oneByte = try BLAKE2b.keyedHash(key: key, domain: "", message: Data([0]), outputLength: 64)
        #expect(
            oneByte.copyToData().hex
                == "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"
        )
    }

    @Test("the domain is hashed before the message, and separates uses")
    func blake2bDomain() throws {
        let key = SecureBytes.random(count: 32)
        let joined = try BLAKE2b.keyedHash(key: key, domain: "", message: Data("ctx".utf8) + Data([9, 9]))
        let split = try BLAKE2b.keyedHash(key: key, domain: "ctx", message: SecureBytes([9, 9]))
        let other = try BLAKE2b.keyedHash(key: key, domain: "other", message: SecureBytes([9, 9]))
        #expect(joined == split)
        #expect(split != other)
        #expect(split.count == 32)
        #expect(throws: CryptoError(.invalidLength, "")) {
            try BLAKE2b.keyedHash(key: SecureBytes([1, 2, 3]), domain: "", message: Data())
        }
    }

    // The same BLAKE2 reference KAT (blake2b-kat.txt, key 00..3f, input 00), through the plain-array form.
    @Test("keyedHashBytes gives the bytes keyedHash gives: the BLAKE2 reference KAT, and with a domain")
    func blake2bBytes() throws {
        let key = SecureBytes(Array(0..<64) as [UInt8])
        let oneByte = try BLAKE2b.keyedHashBytes(key: key, domain: "", message: [UInt8]([0]), outputLength: 64)
        #expect(
            Data(oneByte).hex
                == "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"
        )
        let pepper = SecureBytes.random(count: 32)
        let plain = try BLAKE2b.keyedHashBytes(key: pepper, domain: "ctx", message: Data([9, 9]))
        let secure = try BLAKE2b.keyedHash(key: pepper, domain: "ctx", message: Data([9, 9]))
        #expect(Data(plain) == secure.copyToData())
        #expect(throws: CryptoError(.invalidLength, "")) {
            try BLAKE2b.keyedHashBytes(key: SecureBytes([1, 2, 3]), domain: "", message: Data())
        }
    }

    // FIPS 180-2 appendix B.1.
    @Test("SHA-256 of \"abc\" matches FIPS 180-2 B.1")
    func sha256() {
        #expect(SHA256.hash(Data("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    // RFC 8032 section 7.1, TEST 1.
    @Test("Ed25519 matches RFC 8032 7.1 test 1 and rejects a changed message")
    func ed25519() throws {
        let key = try Ed25519SigningKey(
            seed: SecureBytes(Data(hex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        )
        #expect(key.publicKey.hex == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = key.signature(for: Data())
        #expect(
            signature.hex
                == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        )
        #expect(Ed25519.isValidSignature(signature, for: Data(), publicKey: key.publicKey))
        #expect(!Ed25519.isValidSignature(signature, for: Data([0]), publicKey: key.publicKey))
        #expect(!Ed25519.isValidSignature(signature, for: Data(), publicKey: Ed25519SigningKey().publicKey))
    }
}
