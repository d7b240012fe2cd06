internal import CSodium

import struct Foundation.Data

/// A buffer for secret bytes: locked in memory where the limit allows, zeroed when released,
/// compared in constant time, and never shown by `description`.
///
/// `SecureBytes` is immutable: every operation that changes bytes returns a new buffer. Copying
/// bytes out (``utf8String()``, ``copyToData()``) makes an ordinary, non-zeroed copy: do it only
/// where the secret must leave (a request body, a token handed to the caller).
public final class SecureBytes: @unchecked Sendable {
    // @unchecked Sendable: `storage` is written only inside `init` (before the instance is shared)
    // and zeroed only in `deinit` (when no reference remains); every other access reads it.
    private let storage: UnsafeMutableRawBufferPointer
    private let locked: Bool

    /// The number of bytes.
    public var count: Int { storage.count }

    /// Whether the buffer holds no bytes.
    public var isEmpty: Bool { storage.isEmpty }

    /// Allocates `count` bytes and lets `initialize` fill them before anyone else can see them.
    init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        Sodium.ensureReady()
        // A zero-byte allocation still gets a valid pointer, so every C call below has one.
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        let buffer = UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
        // mlock keeps the page out of swap; RLIMIT_MEMLOCK may refuse, and zeroing still holds then.
        locked = sodium_mlock(raw.baseAddress!, raw.count) == 0
        storage = buffer
        do {
            try initialize(buffer)
        } catch {
            Self.release(buffer, locked: locked)
            throw error
        }
    }

    /// Copies `bytes` into a new secure buffer. The source is not zeroed: prefer building
    /// secrets inside this module where possible.
    public convenience init(_ bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        self.init(count: array.count) { buffer in
            buffer.copyBytes(from: array)
        }
    }

    /// `count` bytes from the operating system's secure random source.
    public static func random(count: Int) -> SecureBytes {
        SecureBytes(count: count) { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
    }

    /// Decodes standard base64 (RFC 4648 section 4, with padding) straight into a secure buffer.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for anything but canonical, padded base64.
    public convenience init(base64Encoded text: String) throws(CryptoError) {
        let decoded = try Base64Codec.decode(text, variant: .original)
        self.init(count: decoded.count) { buffer in
            decoded.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
    }

    deinit {
        Self.release(storage, locked: locked)
    }

    private static func release(_ buffer: UnsafeMutableRawBufferPointer, locked: Bool) {
        let full = UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: max(buffer.count, 1))
        if locked {
            // sodium_munlock zeroes the memory before unlocking it.
            sodium_munlock(full.baseAddress!, full.count)
        } else {
            sodium_memzero(full.baseAddress!, full.count)
        }
        full.deallocate()
    }

    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// A new buffer with the bytes in `range`.
    public func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the buffer")
        return SecureBytes(count: range.count) { buffer in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[range]))
        }
    }

    /// A new buffer holding these bytes followed by `other`'s.
    public func appending(_ other: SecureBytes) -> SecureBytes {
        SecureBytes(count: count + other.count) { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyMemory(from: UnsafeRawBufferPointer(storage))
            other.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: buffer[count...]).copyMemory(from: source)
            }
        }
    }

    /// The bytes as UTF-8 text, or nil if they are not valid UTF-8. The string is an ordinary copy.
    public func utf8String() -> String? {
        String(validating: storage.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// An ordinary (not zeroed) copy of the bytes, for a value that must leave, such as a request body.
    public func copyToData() -> Data {
        Data(UnsafeRawBufferPointer(storage))
    }

    /// The bytes as unpadded base64url (RFC 7515 section 2). The string is an ordinary copy.
    public func base64URLEncodedString() -> String {
        Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .urlSafeNoPadding)
    }

    /// The bytes as unpadded base64url text, itself in a secure buffer (for a derived secret sent on the wire).
    public func base64URLEncoded() -> SecureBytes {
        let text = Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .urlSafeNoPadding)
        return SecureBytes(text.utf8)
    }

    /// The bytes as padded standard base64. The string is an ordinary copy.
    public func base64EncodedString() -> String {
        Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .original)
    }
}

extension SecureBytes: Equatable {
    /// Constant-time comparison of the contents (the lengths are not secret).
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                ConstantTime.equal(left, right)
            }
        }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Says how many bytes, never which.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}

/// Constant-time comparison of byte strings.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes; the time taken depends only on the length.
    public static func equal(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in equal(left, right) } }
    }

    static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        return sodium_memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0
    }
}
