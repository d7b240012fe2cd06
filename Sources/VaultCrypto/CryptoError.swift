/// An error from VaultCrypto. It never carries secret material.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for matching.
    public enum Code: String, Hashable, Sendable {
        /// A sealed box failed authentication: wrong key, or nonce, ciphertext, tag or associated data changed.
        case authenticationFailed
        /// Argon2id parameters outside what this module accepts (see `reason`).
        case invalidParameters
        /// Argon2id parameters under the OWASP minimum.
        case parametersBelowFloor
        /// The key derivation itself failed (usually: not enough memory for memlimit).
        case keyDerivationFailed
        /// A key or nonce of the wrong length.
        case invalidLength
        /// Text that is not strict base64 or base64url.
        case invalidEncoding
        /// A signature that does not verify.
        case invalidSignature
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people; never contains secret material.
    public let reason: String

    package init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
