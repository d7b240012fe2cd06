/// What ``KeyStorage/insert(_:limits:)`` did.
public enum KeyInsertion: Sendable, Equatable {
    /// The key is stored.
    case inserted
    /// The client holds this many keys, its limit: nothing stored.
    case clientLimit(Int)
    /// The storage holds this many keys, its limit: nothing stored.
    case totalLimit(Int)
    /// A key with this id exists already: nothing stored (the caller picks another id).
    case duplicateKeyId
}
