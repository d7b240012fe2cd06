import CredentialVault
import Foundation
import Testing
import VaultCrypto

/// Property-style checks: whatever the input, decoding ends in a value or a typed error, never a
/// crash. With typed throws the compiler already rules out any other error; these loops hunt traps
/// (index out of range, overflow, unbounded recursion).
@Suite("JWT random input never crashes")
struct JWTRandomInputTests {
    static let iterations = 1500

    func randomCount(_ range: ClosedRange<Int>) -> Int { Int.random(in: range) }

    /// Decodes `token`; when it decodes, checks that what came out is consistent.
    func decodeAndCheck(_ token: String) {
        guard let jwt = try? JWT(token: token) else { return }
        #expect(jwt.token == token)
        #expect(!jwt.userId.isEmpty)
        #expect((try? JWT(token: token)) == jwt)
    }

    @Test("random bytes read as a string")
    func randomStrings() {
        for _ in 0..<Self.iterations {
            let bytes = SecureRandom.bytes(count: randomCount(0...300))
            decodeAndCheck(String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test("random strings over the characters a token is made of, and those that break tokens")
    func randomTokenAlphabet() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_....=+/ \n\t{}\"é😀")
        for _ in 0..<Self.iterations {
            let length = randomCount(0...400)
            let bytes = SecureRandom.bytes(count: length)
            decodeAndCheck(String(bytes.map { alphabet[Int($0) % alphabet.count] }))
        }
    }

    @Test("three segments of random base64url bytes")
    func randomSegments() {
        for _ in 0..<Self.iterations {
            let segments = (0..<3).map { _ in Base64URL.encode(SecureRandom.bytes(count: randomCount(0...120))) }
            decodeAndCheck(segments.joined(separator: "."))
        }
    }

    @Test("mutations of a valid claims set: flipped, dropped, inserted and repeated bytes")
    func mutatedJSON() {
        let seed = Array(
            #"{"sub":"alice","exp":1700000000.5,"aud":["a","b"],"x":{"y":[1,-2e3,true,null,"\u00e9\ud83d\ude00"]}}"#
                .utf8
        )
        let significant = Array(#"{}[]:,"\-+.0123456789eEtrufalsn \#u{0}"#.utf8) + [0x80, 0xC3, 0xED, 0xFF]
        var decoded = 0
        for _ in 0..<(Self.iterations * 2) {
            var bytes = seed
            let random = SecureRandom.bytes(count: 16)
            for round in 0..<Int(random[0] % 4 + 1) {
                let position = Int(random[1 + round]) % (bytes.count + 1)
                let replacement = significant[Int(random[5 + round]) % significant.count]
                switch random[9 + round] % 4 {
                case 0 where position < bytes.count: bytes[position] = replacement
                case 1 where position < bytes.count: bytes.remove(at: position)
                case 2: bytes.insert(replacement, at: position)
                default:
                    let end = min(bytes.count, position + Int(random[13] % 16))
                    bytes.insert(contentsOf: bytes[position..<end], at: position)
                }
            }
            let token =
                "\(JWTFixture.segment(JWTFixture.header)).\(JWTFixture.segment(bytes: bytes)).\(JWTFixture.signature)"
            if (try? JWT(token: token)) != nil { decoded += 1 }
            decodeAndCheck(token)
        }
        // Some mutations (inside strings, for instance) keep the JSON valid; most do not.
        #expect(decoded < Self.iterations * 2)
    }

    @Test("random nesting of arrays and objects up to and past the depth limit")
    func randomNesting() {
        for _ in 0..<200 {
            let depth = randomCount(0...100)
            let kinds = SecureRandom.bytes(count: depth)
            var open = ""
            var close = ""
            for kind in kinds {
                if kind % 2 == 0 {
                    open += "["
                    close = "]" + close
                } else {
                    open += #"{"k":"#
                    close = "}" + close
                }
            }
            let token = JWTFixture.make(payload: #"{"sub":"alice","x":\#(open)1\#(close)}"#)
            let failure = jwtDecodeFailure(token)
            #expect(failure == (depth < 64 ? nil : .invalidJSON), "depth \(depth)")
        }
    }
}
