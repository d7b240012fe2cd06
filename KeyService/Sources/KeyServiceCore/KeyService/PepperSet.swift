public import VaultCrypto

/// The peppers a key service holds, by version: the newest protects new keys, the older ones still open the keys
/// made under them until each moves to the newest at its next right secret.
///
/// A pepper is a 32-byte secret kept out of the database (a 0600 file or the environment): without it a copy of
/// the database cannot test a guess against a verifier.
public struct PepperSet: Sendable {
    /// The length of every pepper.
    public static let pepperLength = 32

    /// The version new keys are made under: the highest one.
    public let newestVersion: Int
    private let peppers: [Int: SecureBytes]

    /// The peppers by version (1 and up); new keys get `newestVersion`, by default the highest.
    ///
    /// Naming an older version as the newest is the first step of a rotation across several instances: every
    /// instance gets the new pepper before any makes a key under it.
    /// - Throws: ``KeyServiceError`` for no pepper, a version below 1, a pepper that is not 32 bytes, or a
    ///   `newestVersion` not held.
    public init(_ peppers: [Int: SecureBytes], newestVersion: Int? = nil) throws(KeyServiceError) {
        guard let highest = peppers.keys.max() else { throw KeyServiceError("no pepper is configured") }
        let newest = newestVersion ?? highest
        guard peppers[newest] != nil else {
            throw KeyServiceError("pepper version \(newest) is to make new keys, but no such pepper is configured")
        }
        for (version, pepper) in peppers {
            guard version >= 1 else { throw KeyServiceError("pepper version \(version) is not 1 or more") }
            guard pepper.count == Self.pepperLength else {
                throw KeyServiceError("pepper version \(version) is not \(Self.pepperLength) bytes")
            }
        }
        self.newestVersion = newest
        self.peppers = peppers
    }

    /// One pepper as version 1: the mock's state, or a service that never rotated.
    public init(single pepper: SecureBytes) throws(KeyServiceError) {
        try self.init([1: pepper])
    }

    /// The versions held, oldest first.
    public var versions: [Int] { peppers.keys.sorted() }

    /// The pepper of `version`, nil when this service does not hold it.
    package func pepper(version: Int) -> SecureBytes? {
        peppers[version]
    }
}
