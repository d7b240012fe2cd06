/// The outcome of a protocol 2 `confirm`. Nothing is ever counted.
package enum ConfirmationAnswer: Sendable {
    /// The proof is right: the key, and its long secret. `reset` says whether this proof took the count back to
    /// zero (a proof for the current nonce) or only got its grant (the previous nonce); `resealFailure` why the key
    /// could not move to the newest pepper, if it could not.
    case granted(KeyGrant, reset: Bool, resealFailure: (any Error)?)
    /// The proof is wrong, or its nonce stale: nothing changed.
    case wrongProof
    /// The key was made for protocol 1.
    case notProtocol2
    /// No key has this id.
    case missing
}
