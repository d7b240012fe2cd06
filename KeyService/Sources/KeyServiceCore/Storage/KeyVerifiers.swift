/// What proves a credential for one key, under one pepper version: never a secret itself.
public struct KeyVerifiers: Sendable, Equatable {
    /// The keyed BLAKE2b of the key's secret under the pepper of ``pepperVersion``.
    public var secretVerifier: [UInt8]
    /// The keyed BLAKE2b of the key's long secret under the same pepper.
    public var longSecretVerifier: [UInt8]
    /// The long secret, sealed with a pad only the right secret (and the pepper) can make.
    public var sealedLongSecret: [UInt8]
    /// Which pepper the verifiers and the seal are under.
    public var pepperVersion: Int

    /// Verifiers as stored.
    public init(secretVerifier: [UInt8], longSecretVerifier: [UInt8], sealedLongSecret: [UInt8], pepperVersion: Int) {
        self.secretVerifier = secretVerifier
        self.longSecretVerifier = longSecretVerifier
        self.sealedLongSecret = sealedLongSecret
        self.pepperVersion = pepperVersion
    }
}
