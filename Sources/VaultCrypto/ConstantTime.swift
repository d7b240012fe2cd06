internal import CSodium
public import Foundation

/// Constant-time comparison of byte strings.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes; the time taken depends only on the length.
    public static func equal(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return unsafe lhs.withUnsafeBytes { left in
            unsafe rhs.withUnsafeBytes { right in unsafe equal(left, right) }
        }
    }

    static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        // sodium_memcmp's -1 means "different": a comparison, not a status to check.
        return unsafe sodium_memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0
    }
}
