/// What proves a credential for one key, under one pepper version: never a secret itself.
///
/// A protocol 2 key (issue 27) keeps its OPRF key and auth key here too, each sealed with a pad of the same pepper:
/// everything a pepper protects moves together when a key moves to a newer pepper
/// (``KeyStorage/replaceVerifiers(keyId:fromVersion:with:)``).
public struct KeyVerifiers: Sendable, Equatable {
    /// The keyed BLAKE2b of the key's secret under the pepper of ``pepperVersion``.
    public var secretVerifier: [UInt8]
    /// The keyed BLAKE2b of the key's long secret under the same pepper.
    public var longSecretVerifier: [UInt8]
    /// The long secret, sealed with a pad only the right secret (and the pepper) can make.
    public var sealedLongSecret: [UInt8]
    /// Which pepper the verifiers and the seals are under.
    public var pepperVersion: Int
    /// Protocol 2: the key's OPRF key, sealed with a pad of the pepper; nil for a protocol 1 key.
    public var sealedOPRFKey: [UInt8]?
    /// Protocol 2: the client's auth key, sealed with a pad of the pepper; nil until the key is enrolled, and for a
    /// protocol 1 key.
    public var sealedAuthKey: [UInt8]?

    /// Verifiers as stored.
    public init(
        secretVerifier: [UInt8],
        longSecretVerifier: [UInt8],
        sealedLongSecret: [UInt8],
        pepperVersion: Int,
        sealedOPRFKey: [UInt8]? = nil,
        sealedAuthKey: [UInt8]? = nil
    ) {
        self.secretVerifier = secretVerifier
        self.longSecretVerifier = longSecretVerifier
        self.sealedLongSecret = sealedLongSecret
        self.pepperVersion = pepperVersion
        self.sealedOPRFKey = sealedOPRFKey
        self.sealedAuthKey = sealedAuthKey
    }
}
