/// Where a key service keeps its keys. Every method is one atomic step on the shared store, exact across any number
/// of instances on it, and durable before it returns.
///
/// Two engines implement it: ``SQLiteKeyStorage`` (one machine) and the PostgreSQL one (any number of instances).
public protocol KeyStorage: Sendable {
    /// Inserts `row` (failures 0, unlocked) unless `limits` are reached, checking and inserting atomically across
    /// every instance on this storage. Throws on a storage failure (caller answers 500).
    func insert(_ row: StoredKey, limits: KeyLimits) async throws -> KeyInsertion
    /// Counts one attempt on `keyId` in the same statement that reads the key back
    /// (`UPDATE key SET failures = failures + 1, locked = (failures + 1 >= lockAt) WHERE keyid = $1 AND NOT locked
    /// RETURNING ...`), durable before it returns. A locked key or a missing one is not counted.
    /// Throws when the count cannot be written: the caller then answers 503 and never checks the credential.
    func countAttempt(keyId: String, lockAt: Int) async throws -> CountedAttempt
    /// After a right credential: takes the count back to zero and unlocks, but only if the count is still
    /// `failures` (the value this attempt's countAttempt returned), so a late reset never erases a later wrong
    /// attempt. May be deferred/batched by the engine: losing it leaves a count too high, the safe side.
    func resetFailures(keyId: String, ifFailures failures: Int) async throws
    /// Counts one attempt, checks it with `check` (given the key as counted; true for the right credential) and,
    /// when right, takes the count back to zero, as one step: so attempts on one key are "in a row" exactly, even
    /// when a right one and others are in flight together. Durable before it returns, like ``countAttempt(keyId:lockAt:)``,
    /// whose errors it throws. `check` must be quick and must not block (it may run inside the engine's
    /// transaction); it is not called for a locked or missing key. When `check` throws, an engine that overrides
    /// this rolls the count back and throws (nothing counted, nothing answered about the credential); the default
    /// has already counted the attempt by then.
    ///
    /// The default is ``countAttempt(keyId:lockAt:)``, `check`, then ``resetFailures(keyId:ifFailures:)``: exact for
    /// attempts one after another, but concurrent right attempts on one key can then see it locked for a moment
    /// (never unlocked early). An engine overrides it to do all three in one transaction or statement.
    func countAndCheck(
        keyId: String,
        lockAt: Int,
        check: @escaping @Sendable (StoredKey) throws -> Bool
    ) async throws -> CheckedAttempt
    /// Moves a key to new verifiers under another pepper version, only if it is still on `fromVersion`: the
    /// verifiers, the sealed long secret and, for a protocol 2 key, its sealed OPRF key and auth key together.
    func replaceVerifiers(keyId: String, fromVersion: Int, with verifiers: KeyVerifiers) async throws
    /// Protocol 2's `enroll`, as one step: reads the key, asks `check` (given the key as stored) for the sealed auth
    /// key to set or the reason to set nothing, and sets it only while the key has none
    /// (`... WHERE keyid = $1 AND sealed_auth_key IS NULL`), so a key is enrolled once however many try at once.
    /// Nothing is counted. `check` must be quick and must not block (it may run inside the engine's transaction);
    /// it is not called for a missing key. Durable before it returns.
    func enroll(
        keyId: String,
        check: @escaping @Sendable (StoredKey) throws -> Result<[UInt8], EnrollmentRefusal>
    ) async throws -> KeyEnrollment
    /// Protocol 2's `confirm`, as one transaction or statement: reads the key, asks `check` which nonce the proof
    /// is right for and, for the current one, sets `failures = 0, locked = false, previous_nonce = nonce,
    /// nonce = nextNonce` only while the nonce is still the one checked; so a proof resets a key once, and never
    /// after another reset. Nothing is counted. `check` must be quick and must not block; it is not called for a
    /// missing key. Durable before it returns.
    func confirm(
        keyId: String,
        nextNonce: [UInt8],
        check: @escaping @Sendable (StoredKey) throws -> ProofMatch
    ) async throws -> KeyConfirmation
    /// The count of wrong attempts in a row on `keyId`, nil for an unknown key.
    func failures(keyId: String) async throws -> Int?
    /// How many keys each pepper version protects (pepper rotation: an old pepper may be dropped at 0).
    func keysByPepperVersion() async throws -> [Int: Int]
    /// Throws when the storage cannot be reached (for /readyz).
    func checkReady() async throws
}

extension KeyStorage {
    /// Count, check, then a conditional reset: three steps (see the requirement).
    public func countAndCheck(
        keyId: String,
        lockAt: Int,
        check: @escaping @Sendable (StoredKey) throws -> Bool
    ) async throws -> CheckedAttempt {
        let attempt = try await countAttempt(keyId: keyId, lockAt: lockAt)
        guard case .counted(let row, let failures) = attempt, try check(row) else {
            return CheckedAttempt(attempt: attempt, isRight: false)
        }
        do {
            try await resetFailures(keyId: keyId, ifFailures: failures)
            return CheckedAttempt(attempt: attempt, isRight: true)
        } catch {
            return CheckedAttempt(attempt: attempt, isRight: true, resetFailure: error)
        }
    }
}
