package import Foundation

/// The outcome of a protocol 2 `evaluate`.
package enum EvaluationAnswer: Sendable {
    /// The attempt is counted (`failures` in a row now; the key is locked at ``KeyService/attemptsBeforeLock``, this
    /// answer included): `evaluated` is the key's OPRF key times the blinded element, `nonce` what a `confirm`
    /// proof must cover.
    case evaluated(Data, nonce: [UInt8], failures: Int)
    /// The key is locked: nothing counted.
    case locked
    /// No key has this id: nothing counted.
    case missing
    /// The key was made for protocol 1: nothing counted.
    case notProtocol2
    /// The key has no auth key yet (`enroll` first): nothing counted.
    case notEnrolled
}
