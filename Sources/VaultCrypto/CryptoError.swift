/// An error from VaultCrypto. It never carries secret material.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for matching (`error.code == .authenticationFailed`). A struct of static values, not
    /// an enum, so new codes never break a caller's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// A sealed box failed authentication: wrong key, or nonce, ciphertext, tag or associated data changed.
        public static let authenticationFailed = Self("authenticationFailed")
        /// Argon2id parameters outside what this module accepts (see `reason`).
        public static let invalidParameters = Self("invalidParameters")
        /// Argon2id parameters under the OWASP minimum.
        public static let parametersBelowFloor = Self("parametersBelowFloor")
        /// The key derivation itself failed (usually: not enough memory for memlimit).
        public static let keyDerivationFailed = Self("keyDerivationFailed")
        /// A key or nonce of the wrong length.
        public static let invalidLength = Self("invalidLength")
        /// Text that is not strict base64 or base64url.
        public static let invalidEncoding = Self("invalidEncoding")
        /// A signature that does not verify.
        public static let invalidSignature = Self("invalidSignature")
        /// A group element that is not a canonical ristretto255 encoding of a point, or is the identity (``OPRF``).
        public static let invalidElement = Self("invalidElement")
        /// Too many derivations wait already (``Argon2id/maximumWaitingDerivations``): nothing was derived;
        /// try again later.
        public static let busy = Self("busy")

        /// The code's name, such as `authenticationFailed`.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people; never contains secret material.
    public let reason: String

    package init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The code and the reason, as `invalidLength: ...`.
    public var description: String { "\(code): \(reason)" }

    /// Errors are equal when their codes are: the reason is for people, not for matching.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code alone, as ``==(_:_:)`` compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
