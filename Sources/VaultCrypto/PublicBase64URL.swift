package import Foundation

/// ``Base64URL``'s strict rules (RFC 7515 section 2: the URL-safe alphabet, no padding, no whitespace, no non-zero
/// trailing bits) for bytes that are not secret: ciphertexts, nonces, salts, and a JWT's header and payload (not its
/// signature, which is what makes a bearer token unguessable). For the modules of this package only.
///
/// A table lookup per character, several times faster than ``Base64URL``, whose libsodium code takes the same time
/// whatever the bytes are so that a secret's encoding leaks nothing through timing. Here the time and the memory
/// touched depend on the bytes: never use it for a key, a password-derived value or anything a key is made from.
/// A login encodes and decodes about 5 KB of public base64url (its sealed record, two JWTs' headers and payloads), cold after Argon2id, so
/// the constant-time code cost it tens of microseconds for nothing (issue 23).
package enum PublicBase64URL {
    /// Encodes `data` without padding: the same text as ``Base64URL/encode(_:)``.
    package static func encode(_ data: Data) -> String {
        let bytes = [UInt8](data)
        let full = bytes.count / 3
        let rest = bytes.count % 3
        var text: [UInt8] = []
        text.reserveCapacity(full * 4 + (rest == 0 ? 0 : rest + 1))
        func put(_ sextet: UInt32) { text.append(alphabet[Int(sextet & 63)]) }
        for block in 0..<full {
            let index = block * 3
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            put(word >> 18)
            put(word >> 12)
            put(word >> 6)
            put(word)
        }
        if rest > 0 {
            let index = full * 3
            let second = rest == 2 ? UInt32(bytes[index + 1]) : 0
            let word = UInt32(bytes[index]) << 16 | second << 8
            put(word >> 18)
            put(word >> 12)
            if rest == 2 { put(word >> 6) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes unpadded base64url; it accepts and refuses exactly what ``Base64URL/decode(_:)`` does.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for padding, the standard alphabet's `+` or `/`, whitespace, any
    ///   other byte outside the alphabet, a length of 1 mod 4, or non-zero trailing bits.
    package static func decode(_ text: some StringProtocol) throws(CryptoError) -> Data {
        let input = Array(text.utf8)
        let refusal = CryptoError(.invalidEncoding, "the text is not canonical base64url")
        let rest = input.count % 4
        guard rest != 1 else { throw refusal }
        let full = input.count / 4
        var output: [UInt8] = []
        output.reserveCapacity(full * 3 + (rest == 0 ? 0 : rest - 1))
        // Every character's value, or 0xFF past the alphabet: OR-ed together, any 0xFF shows once at the end.
        var seen: UInt8 = 0
        func value(_ index: Int) -> UInt32 {
            let sextet = decodingTable[Int(input[index])]
            seen |= sextet
            return UInt32(sextet)
        }
        for block in 0..<full {
            let index = block * 4
            let word = value(index) << 18 | value(index + 1) << 12 | value(index + 2) << 6 | value(index + 3)
            output.append(UInt8(truncatingIfNeeded: word >> 16))
            output.append(UInt8(truncatingIfNeeded: word >> 8))
            output.append(UInt8(truncatingIfNeeded: word))
        }
        if rest > 0 {
            let index = full * 4
            let third = rest == 3 ? value(index + 2) : 0
            let word = value(index) << 18 | value(index + 1) << 12 | third << 6
            output.append(UInt8(truncatingIfNeeded: word >> 16))
            if rest == 3 { output.append(UInt8(truncatingIfNeeded: word >> 8)) }
            // The bits past the last whole byte must be zero: otherwise two texts would decode to the same bytes.
            guard word & (rest == 3 ? 0xFF : 0xFFFF) == 0 else { throw refusal }
        }
        guard seen & 0x80 == 0 else { throw refusal }
        return Data(output)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's value in the alphabet, 0xFF for a byte outside it.
    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
