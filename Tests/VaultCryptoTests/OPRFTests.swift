import Foundation
import Testing

@testable import VaultCrypto

/// RFC 9497 appendix A.1.1 (OPRF(ristretto255, SHA-512), OPRF mode): every vector of that section, and RFC 9380
/// appendix K.3 (expand_message_xmd with SHA-512) for the hash underneath. The values are copied from the RFCs' text.
@Suite("OPRF (RFC 9497 ristretto255-SHA512)")
struct OPRFTests {
    /// RFC 9497 A.1.1: `Seed`, `KeyInfo` and the `skSm` DeriveKeyPair makes of them.
    static let seed = [UInt8](repeating: 0xa3, count: 32)
    static let keyInfo = Array("test key".utf8)
    static let skSm = "5ebcea5ee37023ccb9fc2d2019f9d7737be85591ae8652ffa9ef0f4d37063b0e"

    struct Vector: Sendable, CustomTestStringConvertible {
        let input: String
        let blind: String
        let blindedElement: String
        let evaluationElement: String
        let output: String
        var testDescription: String { "Input = \(input)" }
    }

    /// RFC 9497 A.1.1, Test Vector 1 and Test Vector 2 (batch size 1; the OPRF mode has no others).
    static let vectors = [
        Vector(
            input: "00",
            blind: "64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706",
            blindedElement: "609a0ae68c15a3cf6903766461307e5c8bb2f95e7e6550e1ffa2dc99e412803c",
            evaluationElement: "7ec6578ae5120958eb2db1745758ff379e77cb64fe77b0b2d8cc917ea0869c7e",
            output: "527759c3d9366f277d8c6020418d96bb393ba2afb20ff90df23fb7708264e2f3"
                + "ab9135e3bd69955851de4b1f9fe8a0973396719b7912ba9ee8aa7d0b5e24bcf6"
        ),
        Vector(
            input: "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
            blind: "64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706",
            blindedElement: "da27ef466870f5f15296299850aa088629945a17d1f5b7f5ff043f76b3c06418",
            evaluationElement: "b4cbf5a4f1eeda5a63ce7b77c7d23f461db3fcab0dd28e4e17cecb5c90d02c25",
            output: "f4a74c9c592497375e796aa837e907b1a045d34306a749db9f34221f7e750cb4"
                + "f2a6413a6bf6fa5e19ba6348eb673934a722a7ede2e7621306d18951e7cf2c73"
        ),
    ]

    @Test("DeriveKeyPair gives the RFC's skSm")
    func deriveKeyPair() throws {
        let key = try OPRF.deriveKey(seed: Self.seed, info: Self.keyInfo)
        #expect(Self.hex(key.copyToData()) == Self.skSm)
    }

    @Test("Blind, BlindEvaluate and Finalize give the RFC's values", arguments: vectors)
    func vector(_ vector: Vector) throws {
        let input = SecureBytes(try Self.bytes(vector.input))
        let key = SecureBytes(try Self.bytes(Self.skSm))
        let blinding = try OPRF.blind(input, blind: SecureBytes(try Self.bytes(vector.blind)))
        #expect(Self.hex(blinding.blindedElement) == vector.blindedElement)
        let evaluated = try OPRF.blindEvaluate(key: key, blindedElement: blinding.blindedElement)
        #expect(Self.hex(evaluated) == vector.evaluationElement)
        let output = try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated)
        #expect(Self.hex(output.copyToData()) == vector.output)
    }

    @Test("a random blind gives the same output, and another blinded element each time")
    func randomBlinds() throws {
        let input = SecureBytes(Data("correct horse".utf8))
        let key = OPRF.generateKey()
        let first = try OPRF.blind(input)
        let second = try OPRF.blind(input)
        #expect(first.blindedElement != second.blindedElement)
        let outputs = try [first, second].map { blinding in
            try OPRF.finalize(
                input,
                blinding: blinding,
                evaluatedElement: try OPRF.blindEvaluate(key: key, blindedElement: blinding.blindedElement)
            )
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0].count == OPRF.outputLength)
        // Another key, another function.
        let other = try OPRF.finalize(
            input,
            blinding: first,
            evaluatedElement: try OPRF.blindEvaluate(key: OPRF.generateKey(), blindedElement: first.blindedElement)
        )
        #expect(other != outputs[0])
    }

    /// Elements from outside: the identity, a non-canonical encoding (the field prime p = 2^255 - 19, which is 0
    /// unreduced), bytes that decode to no point, and wrong lengths, refused on both sides.
    @Test("invalid elements are refused by the server and by the client")
    func invalidElements() throws {
        let identity = Data(count: 32)
        var prime = Data(repeating: 0xff, count: 32)
        prime[0] = 0xed
        prime[31] = 0x7f
        var notAPoint = Data(count: 32)
        notAPoint[0] = 1  // 1 is not a valid ristretto255 encoding (s must make a square)
        let invalid = [identity, prime, notAPoint, Data(count: 31), Data(count: 33), Data()]
        let input = SecureBytes(Data("x".utf8))
        let blinding = try OPRF.blind(input)
        for element in invalid {
            #expect(!OPRF.isValidElement(element))
            #expect(throws: CryptoError(.invalidElement, "")) {
                try OPRF.blindEvaluate(key: OPRF.generateKey(), blindedElement: element)
            }
            #expect(throws: CryptoError(.invalidElement, "")) {
                try OPRF.finalize(input, blinding: blinding, evaluatedElement: element)
            }
        }
        #expect(OPRF.isValidElement(blinding.blindedElement))
    }

    /// RFC 9380 K.3, expand_message_xmd(SHA-512), DST "QUUX-V01-CS02-with-expander-SHA512-256".
    @Test(
        "expand_message_xmd with SHA-512 gives RFC 9380's uniform bytes",
        arguments: [
            ("", 0x20, "6b9a7312411d92f921c6f68ca0b6380730a1a4d982c507211a90964c394179ba"),
            ("abc", 0x20, "0da749f12fbe5483eb066a5f595055679b976e93abe9be6f0f6318bce7aca8dc"),
            ("abcdef0123456789", 0x20, "087e45a86e2939ee8b91100af1583c4938e0f5fc6c9db4b107b83346bc967f58"),
            (
                "", 0x80,
                "41b037d1734a5f8df225dd8c7de38f851efdb45c372887be655212d07251b921"
                    + "b052b62eaed99b46f72f2ef4cc96bfaf254ebbbec091e1a3b9e4fb5e5b619d2e"
                    + "0c5414800a1d882b62bb5cd1778f098b8eb6cb399d5d9d18f5d5842cf5d13d7e"
                    + "b00a7cff859b605da678b318bd0e65ebff70bec88c753b159a805d2c89c55961"
            ),
        ]
    )
    func expandMessage(message: String, length: Int, expected: String) throws {
        let domain = Array("QUUX-V01-CS02-with-expander-SHA512-256".utf8)
        let uniform = try Array(message.utf8).withUnsafeBytes { bytes in
            try ExpandMessageXMD.sha512(message: bytes, domain: domain, length: length)
        }
        #expect(Self.hex(uniform.copyToData()) == expected)
    }

    @Test("expand_message_xmd refuses what RFC 9380 aborts on")
    func expandMessageLimits() {
        for (domainLength, length) in [(256, 32), (10, 0), (10, 65_536), (10, 255 * 64 + 1)] {
            #expect(throws: CryptoError(.invalidLength, "")) {
                try [UInt8]().withUnsafeBytes { bytes in
                    try ExpandMessageXMD.sha512(
                        message: bytes,
                        domain: [UInt8](repeating: 0x41, count: domainLength),
                        length: length
                    )
                }
            }
        }
    }

    static func hex(_ data: Data) -> String { Hex.encode(data) }

    static func bytes(_ hex: String) throws -> [UInt8] {
        let characters = Array(hex.utf8)
        return try stride(from: 0, to: characters.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw CryptoError(.invalidEncoding, "not hex")
            }
            return byte
        }
    }
}
