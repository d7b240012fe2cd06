/// What ``KeyStorage/countAndCheck(keyId:lockAt:check:)`` did.
public struct CheckedAttempt: Sendable {
    /// The attempt as counted (or not: a locked or missing key).
    public var attempt: CountedAttempt
    /// Whether `check` said the credential is right; the count is then back to zero (and the lock its own count
    /// set is gone), unless ``resetFailure`` says otherwise.
    public var isRight: Bool
    /// Why a right attempt's count could not be taken back to zero, if it could not (the safe side: it stays).
    public var resetFailure: (any Error)?

    /// An attempt as counted and checked.
    public init(attempt: CountedAttempt, isRight: Bool, resetFailure: (any Error)? = nil) {
        self.attempt = attempt
        self.isRight = isRight
        self.resetFailure = resetFailure
    }
}
