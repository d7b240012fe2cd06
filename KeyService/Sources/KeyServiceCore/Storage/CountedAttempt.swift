/// What ``KeyStorage/countAttempt(keyId:lockAt:)`` found.
public enum CountedAttempt: Sendable {
    /// The attempt is counted: `failures` in a row after it; the key is locked when `failures >= lockAt`.
    case counted(StoredKey, failures: Int)
    /// The key is locked: nothing counted.
    case locked
    /// No key has this id: nothing counted.
    case missing
}
