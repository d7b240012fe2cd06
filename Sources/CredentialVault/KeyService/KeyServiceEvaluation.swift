public import Foundation

/// A protocol v2 `evaluate` answer: the evaluated element, and the nonce a proof of the opened envelope signs.
public struct KeyServiceEvaluation: Sendable {
    /// The key's OPRF key times the blinded element (32 bytes).
    public let evaluatedElement: Data
    /// The key's current nonce, for ``KeyService/confirm(keyId:nonce:proof:)``.
    public let nonce: Data

    /// An evaluation as the key service sent it.
    public init(evaluatedElement: Data, nonce: Data) {
        self.evaluatedElement = evaluatedElement
        self.nonce = nonce
    }
}
