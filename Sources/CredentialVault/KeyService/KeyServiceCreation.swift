public import Foundation

/// A protocol v2 `createkey` answer: the new key (with its long secret), and the evaluation of the blinded element
/// sent with it.
public struct KeyServiceCreation: Sendable {
    /// The new key; not usable for a login until it is enrolled (``KeyService/enroll(keyId:longSecret:authKey:)``).
    public let key: KeyServiceKey
    /// The key's OPRF key times the blinded element (32 bytes).
    public let evaluatedElement: Data

    /// A creation as the key service sent it.
    public init(key: KeyServiceKey, evaluatedElement: Data) {
        self.key = key
        self.evaluatedElement = evaluatedElement
    }
}
