/// What ``KeyStorage/confirm(keyId:nextNonce:check:)`` did.
public enum KeyConfirmation: Sendable {
    /// The key as it was read (before any reset), and what the check made of the proof; for
    /// ``ProofMatch/currentNonce`` the reset and the new nonce are committed.
    case checked(StoredKey, ProofMatch)
    /// No key has this id: nothing checked.
    case missing
}
