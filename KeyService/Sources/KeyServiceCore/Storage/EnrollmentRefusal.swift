/// Why a protocol 2 `enroll` set nothing (the check of ``KeyStorage/enroll(keyId:check:)`` says which).
public enum EnrollmentRefusal: Error, Sendable, Equatable {
    /// The key was made for protocol 1.
    case notProtocol2
    /// The long secret sent is not the key's.
    case wrongLongSecret
    /// The key has its auth key already: it is set once.
    case alreadyEnrolled
}
