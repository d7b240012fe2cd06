// TEMPORARY (feat-postgres): a copy of the storage seam from /work/notes/keystorage-spec.md, so this engine builds
// before feat-core's KeyServiceCore lands. Deleted at the merge; the engine then imports KeyServiceCore.
public import Foundation

/// Where a key service keeps its keys. Every method is one atomic step on the shared store, exact across any number
/// of instances on it, and durable before it returns.
public protocol KeyStorage: Sendable {
    /// Inserts `row` (failures 0, unlocked) unless `limits` are reached, checking and inserting atomically.
    func insert(_ row: StoredKey, limits: KeyLimits) async throws -> KeyInsertion
    /// Counts one attempt on `keyId` in the same statement that reads the key back, durable before it returns.
    func countAttempt(keyId: String, lockAt: Int) async throws -> CountedAttempt
    /// Takes the count back to zero and unlocks, only if the count is still `failures`.
    func resetFailures(keyId: String, ifFailures failures: Int) async throws
    /// Counts one attempt, checks it with `check` and, when right, takes the count back to zero, as one step.
    func countAndCheck(
        keyId: String,
        lockAt: Int,
        check: @escaping @Sendable (StoredKey) -> Bool
    ) async throws -> CheckedAttempt
    /// Moves a key to new verifiers under another pepper version, only if it is still on `fromVersion`.
    func replaceVerifiers(keyId: String, fromVersion: Int, with verifiers: KeyVerifiers) async throws
    /// The count of wrong attempts in a row on `keyId`, nil for an unknown key.
    func failures(keyId: String) async throws -> Int?
    /// How many keys each pepper version protects.
    func keysByPepperVersion() async throws -> [Int: Int]
    /// Throws when the storage cannot be reached.
    func checkReady() async throws
}

/// A key's verifiers under one pepper version.
public struct KeyVerifiers: Sendable, Equatable {
    /// The secret's verifier.
    public var secretVerifier: [UInt8]
    /// The long secret's verifier.
    public var longSecretVerifier: [UInt8]
    /// The sealed long secret.
    public var sealedLongSecret: [UInt8]
    /// The pepper version.
    public var pepperVersion: Int

    /// Memberwise.
    public init(secretVerifier: [UInt8], longSecretVerifier: [UInt8], sealedLongSecret: [UInt8], pepperVersion: Int) {
        self.secretVerifier = secretVerifier
        self.longSecretVerifier = longSecretVerifier
        self.sealedLongSecret = sealedLongSecret
        self.pepperVersion = pepperVersion
    }
}

/// One stored key.
public struct StoredKey: Sendable {
    /// The key id.
    public var keyId: String
    /// The data key.
    public var key: [UInt8]
    /// The verifiers.
    public var verifiers: KeyVerifiers
    /// When it was made.
    public var createdAt: Date
    /// Who made it.
    public var createdBy: String

    /// Memberwise.
    public init(keyId: String, key: [UInt8], verifiers: KeyVerifiers, createdAt: Date, createdBy: String) {
        self.keyId = keyId
        self.key = key
        self.verifiers = verifiers
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// Key creation limits.
public struct KeyLimits: Sendable {
    /// Per client.
    public var perClient: Int
    /// In all.
    public var total: Int

    /// Memberwise.
    public init(perClient: Int, total: Int) {
        self.perClient = perClient
        self.total = total
    }
}

/// What an insert did.
public enum KeyInsertion: Sendable, Equatable {
    case inserted
    case clientLimit(Int)
    case totalLimit(Int)
    case duplicateKeyId
}

/// What counting an attempt found.
public enum CountedAttempt: Sendable {
    case counted(StoredKey, failures: Int)
    case locked
    case missing
}

/// What countAndCheck did.
public struct CheckedAttempt: Sendable {
    /// The attempt as counted.
    public var attempt: CountedAttempt
    /// Whether the credential was right.
    public var isRight: Bool
    /// Why a right attempt's count could not be reset.
    public var resetFailure: (any Error)?

    /// Memberwise.
    public init(attempt: CountedAttempt, isRight: Bool, resetFailure: (any Error)? = nil) {
        self.attempt = attempt
        self.isRight = isRight
        self.resetFailure = resetFailure
    }
}
