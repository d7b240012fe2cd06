/// Which of a protocol 2 key's nonces a `confirm` proof is right for (the check of
/// ``KeyStorage/confirm(keyId:nextNonce:check:)`` decides).
public enum ProofMatch: Sendable, Equatable {
    /// The key's current nonce: the count goes back to zero, the lock its own count set is gone, and the nonce is
    /// replaced (so the proof cannot reset anything again).
    case currentNonce
    /// The nonce before the last reset: a grant, and nothing changed.
    case previousNonce
    /// Neither (or the key is not a protocol 2 key): nothing changed.
    case wrong
}
