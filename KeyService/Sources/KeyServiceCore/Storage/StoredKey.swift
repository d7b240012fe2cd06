public import Foundation

/// One key as the storage keeps it: the data key, its verifiers, and who created it when.
public struct StoredKey: Sendable {
    /// The key id the client names (a lower-case UUID).
    public var keyId: String
    /// The 32-byte data key handed out for the right credential.
    public var key: [UInt8]
    /// What proves the credentials.
    public var verifiers: KeyVerifiers
    /// When the key was created.
    public var createdAt: Date
    /// The client address text (``ClientAddress``), for the per-client limit.
    public var createdBy: String

    /// A key as stored.
    public init(keyId: String, key: [UInt8], verifiers: KeyVerifiers, createdAt: Date, createdBy: String) {
        self.keyId = keyId
        self.key = key
        self.verifiers = verifiers
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}
