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
    /// The key-service protocol the key was made for: 1 (TIM KeyService v1) or 2 (the OPRF protocol); it never
    /// changes.
    public var protocolVersion: Int
    /// Protocol 2: the 32 random bytes a `confirm` proof must cover; a right proof replaces them. Nil for protocol 1.
    public var nonce: [UInt8]?
    /// Protocol 2: the nonce before the last reset (a concurrent right login's proof still gets its grant); nil
    /// until the first reset.
    public var previousNonce: [UInt8]?

    /// A key as stored.
    public init(
        keyId: String,
        key: [UInt8],
        verifiers: KeyVerifiers,
        createdAt: Date,
        createdBy: String,
        protocolVersion: Int = 1,
        nonce: [UInt8]? = nil,
        previousNonce: [UInt8]? = nil
    ) {
        self.keyId = keyId
        self.key = key
        self.verifiers = verifiers
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.protocolVersion = protocolVersion
        self.nonce = nonce
        self.previousNonce = previousNonce
    }
}
