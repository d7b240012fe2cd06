internal import CSodium
public import Foundation

/// Random bytes from the operating system's secure source (libsodium's `randombytes_buf`).
public enum SecureRandom {
    /// `count` random bytes. For secrets, prefer ``SecureBytes/random(count:)``.
    public static func bytes(count: Int) -> Data {
        Sodium.ensureReady()
        var data = Data(count: count)
        unsafe data.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { unsafe randombytes_buf(base, buffer.count) }
        }
        return data
    }
}
