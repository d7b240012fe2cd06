internal import CSodium
public import Foundation
import Synchronization

/// Argon2id parameters, stored beside what they protect so that raising the defaults never
/// strands an existing vault.
public struct Argon2idParameters: Codable, Hashable, Sendable {
    /// Passes over memory (libsodium's opslimit, Argon2's t).
    public let opsLimit: UInt64
    /// Memory in bytes (libsodium's memlimit; Argon2 references give KiB). Always one lane.
    public let memLimitBytes: UInt64
    /// The 16-byte random salt.
    public let salt: Data

    /// The default cost: 2 passes over 64 MiB (about 0.1 s here).
    public static let defaultOpsLimit: UInt64 = 2
    /// The default memory: 64 MiB.
    public static let defaultMemLimitBytes: UInt64 = 64 << 20
    /// Salt length: 16 bytes.
    public static let saltLength = Int(crypto_pwhash_SALTBYTES)
    /// Memory above this is refused: a hostile envelope must not make the process allocate without bound.
    public static let maximumMemLimitBytes: UInt64 = 4 << 30
    /// Passes above this are refused, for the same reason.
    public static let maximumOpsLimit: UInt64 = 64

    /// OWASP's minimum Argon2id configurations (Password Storage Cheat Sheet): memory in MiB for
    /// a number of passes; any pair at or above one of them is accepted.
    static let owaspFloor: [(memoryMiB: UInt64, passes: UInt64)] = [(47, 1), (19, 2), (12, 3), (9, 4), (7, 5)]

    /// Parameters with a fresh random salt.
    public static func generate(
        opsLimit: UInt64 = defaultOpsLimit,
        memLimitBytes: UInt64 = defaultMemLimitBytes
    ) throws(CryptoError) -> Argon2idParameters {
        let parameters = Argon2idParameters(
            opsLimit: opsLimit,
            memLimitBytes: memLimitBytes,
            salt: SecureRandom.bytes(count: saltLength)
        )
        try parameters.validate()
        return parameters
    }

    /// Parameters as read back from storage; ``validate()`` runs before every derivation.
    public init(opsLimit: UInt64, memLimitBytes: UInt64, salt: Data) {
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.salt = salt
    }

    /// Checks the salt length, the OWASP floor and this module's ceiling.
    /// - Throws: ``CryptoError/Code/parametersBelowFloor`` or ``CryptoError/Code/invalidParameters``.
    public func validate() throws(CryptoError) {
        guard salt.count == Self.saltLength else {
            throw CryptoError(
                .invalidParameters,
                "the Argon2id salt must be \(Self.saltLength) bytes, not \(salt.count)"
            )
        }
        guard opsLimit <= Self.maximumOpsLimit, memLimitBytes <= Self.maximumMemLimitBytes else {
            throw CryptoError(
                .invalidParameters,
                "Argon2id cost above the ceiling (\(Self.maximumOpsLimit) passes, \(Self.maximumMemLimitBytes >> 20) MiB)"
            )
        }
        let meetsFloor = Self.owaspFloor.contains { floor in
            opsLimit >= floor.passes && memLimitBytes >= floor.memoryMiB << 20
        }
        guard meetsFloor else {
            throw CryptoError(
                .parametersBelowFloor,
                "Argon2id with \(opsLimit) passes over \(memLimitBytes >> 20) MiB is under OWASP's minimum "
                    + "(19 MiB with 2 passes, or an equivalent pair); raise the memory or the passes"
            )
        }
    }
}
