/// What ``KeyStorage/enroll(keyId:check:)`` did.
public enum KeyEnrollment: Sendable, Equatable {
    /// The sealed auth key is stored: the key can be evaluated from now on.
    case enrolled
    /// Nothing was written, for this reason.
    case refused(EnrollmentRefusal)
    /// No key has this id.
    case missing
}
