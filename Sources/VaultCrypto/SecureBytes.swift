internal import CSodium
public import Foundation

// @safe: the pointer never leaves VaultCrypto; the public API copies bytes out or checks ranges first.
/// A buffer for secret bytes: locked in memory where the limit allows, zeroed when released,
/// compared in constant time, and never shown by `description`.
///
/// `SecureBytes` is immutable: every operation that changes bytes returns a new buffer. Copying
/// bytes out (``utf8String()``, ``copyToData()``) makes an ordinary, non-zeroed copy: do it only
/// where the secret must leave (a request body, a token handed to the caller).
@safe
public final class SecureBytes: @unchecked Sendable {
    // @unchecked Sendable: `storage` is written only inside `init` (before the instance is shared)
    // and zeroed only in `deinit` (when no reference remains); every other access reads it.
    private let storage: UnsafeMutableRawBufferPointer
    private let home: Home

    /// Where the bytes live: a slot of a ``SecureArena`` (small buffers), or a heap block locked on its own when
    /// `locked`.
    private enum Home {
        case arena(SecureArena)
        case heap(locked: Bool)
    }

    /// The number of bytes.
    public var count: Int { unsafe storage.count }

    /// Whether the buffer holds no bytes.
    public var isEmpty: Bool { unsafe storage.isEmpty }

    /// Allocates `count` bytes and lets `initialize` fill them before anyone else can see them.
    /// If `initialize` throws, the buffer is zeroed and released, and the error passed on.
    init<E: Error>(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        Sodium.ensureReady()
        // A zero-byte buffer still gets a valid pointer, so every C call below has one.
        let size = max(count, 1)
        let raw: UnsafeMutableRawBufferPointer
        let home: Home
        if let arena = SecureArena.arena(for: size), let slot = unsafe arena.allocate() {
            // Locked once for all its slots, and zeroed.
            unsafe raw = UnsafeMutableRawBufferPointer(start: slot, count: size)
            home = .arena(arena)
        } else {
            unsafe raw = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            unsafe raw.initializeMemory(as: UInt8.self, repeating: 0)
            // mlock keeps the page out of swap; RLIMIT_MEMLOCK may refuse, and zeroing still holds then: a refusal is
            // an answer, not an error. Not sodium_mlock: its madvise(MADV_DONTDUMP) takes only page-aligned addresses
            // and so fails (EINVAL) for a heap block; the arena's pages have it. Core files are the process's to turn
            // off (the CLI does, `CoreDumps`).
            let locked = unsafe mlock(raw.baseAddress!, raw.count) == 0
            home = .heap(locked: locked)
        }
        let buffer = unsafe UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
        // Filled before it is stored: a throw after every stored property is set would run deinit as well,
        // and release the buffer twice.
        do {
            try unsafe initialize(buffer)
        } catch {
            unsafe Self.release(buffer, from: home)
            throw error
        }
        self.home = home
        unsafe storage = buffer
    }

    /// Copies `bytes` into a new secure buffer. The source is not zeroed: prefer building
    /// secrets inside this module where possible.
    public convenience init(_ bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        unsafe self.init(count: array.count) { buffer in
            unsafe buffer.copyBytes(from: array)
        }
    }

    /// `count` bytes from the operating system's secure random source.
    public static func random(count: Int) -> SecureBytes {
        unsafe SecureBytes(count: count) { buffer in
            if let base = buffer.baseAddress { unsafe randombytes_buf(base, buffer.count) }
        }
    }

    /// Decodes standard base64 (RFC 4648 section 4, with padding) straight into a secure buffer.
    /// - Throws: ``CryptoError/Code/invalidEncoding`` for anything but canonical, padded base64.
    public convenience init(base64Encoded text: String) throws(CryptoError) {
        let decoded = try Base64Codec.decode(text, variant: .original)
        unsafe self.init(count: decoded.count) { buffer in
            unsafe decoded.withUnsafeBytes { unsafe buffer.copyMemory(from: $0) }
        }
    }

    deinit {
        unsafe Self.release(storage, from: home)
    }

    private static func release(_ buffer: UnsafeMutableRawBufferPointer, from home: Home) {
        let full = unsafe UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: max(buffer.count, 1))
        switch home {
        case .arena(let arena):
            // The arena zeroes the slot as it takes it back.
            unsafe arena.release(full.baseAddress!)
        case .heap(let locked):
            // Zeroed before it is unlocked, as sodium_munlock does; it unlocks only what init locked.
            unsafe sodium_memzero(full.baseAddress!, full.count)
            if locked { unsafe Sodium.check(munlock(full.baseAddress!, full.count), cannotFail: "munlock") }
            unsafe full.deallocate()
        }
    }

    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try unsafe body(UnsafeRawBufferPointer(storage))
    }

    /// A new buffer with the bytes in `range`.
    public func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the buffer")
        return unsafe SecureBytes(count: range.count) { buffer in
            unsafe buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[range]))
        }
    }

    /// A new buffer holding these bytes followed by `other`'s.
    public func appending(_ other: SecureBytes) -> SecureBytes {
        unsafe SecureBytes(count: count + other.count) { buffer in
            unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                .copyMemory(from: UnsafeRawBufferPointer(storage))
            unsafe other.withUnsafeBytes { source in
                unsafe UnsafeMutableRawBufferPointer(rebasing: buffer[count...]).copyMemory(from: source)
            }
        }
    }

    /// The bytes as UTF-8 text, or nil if they are not valid UTF-8. The string is an ordinary copy.
    public func utf8String() -> String? {
        unsafe String(validating: storage.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// An ordinary (not zeroed) copy of the bytes, for a value that must leave, such as a request body.
    public func copyToData() -> Data {
        unsafe Data(UnsafeRawBufferPointer(storage))
    }

    /// The bytes as unpadded base64url (RFC 7515 section 2). The string is an ordinary copy.
    public func base64URLEncodedString() -> String {
        unsafe Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .urlSafeNoPadding)
    }

    /// The bytes as unpadded base64url text, itself in a secure buffer (for a derived secret sent on the wire).
    public func base64URLEncoded() -> SecureBytes {
        let text = unsafe Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .urlSafeNoPadding)
        return SecureBytes(text.utf8)
    }

    /// The bytes as padded standard base64. The string is an ordinary copy.
    public func base64EncodedString() -> String {
        unsafe Base64Codec.encode(UnsafeRawBufferPointer(storage), variant: .original)
    }
}

extension SecureBytes: Equatable {
    /// Constant-time comparison of the contents (the lengths are not secret).
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return unsafe lhs.withUnsafeBytes { left in
            unsafe rhs.withUnsafeBytes { right in
                unsafe ConstantTime.equal(left, right)
            }
        }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Says how many bytes, never which.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    /// The same as ``description``: the count, never the bytes.
    public var debugDescription: String { description }
}
