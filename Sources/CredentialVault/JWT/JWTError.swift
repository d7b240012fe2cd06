/// Why a string could not be decoded as a ``JWT``.
///
/// Match on ``code``; new codes may be added without breaking callers, because ``Code`` is a
/// struct of static values rather than an enum. Neither ``code`` nor ``reason`` ever contains
/// any part of the token: they name the segment and the rule that failed, nothing more.
public struct JWTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for matching (`error.code == .duplicateClaim`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case tooLong
            case malformed
            case invalidBase64
            case invalidUTF8
            case invalidJSON
            case notAnObject
            case duplicateClaim
            case invalidHeader
            case invalidClaim
            case missingSubject
        }

        let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The token is longer than ``JWT/maximumLength``; it was refused before being split.
        public static let tooLong = Self(.tooLong)
        /// Not the compact serialization: not exactly three dot-separated segments, an empty header or
        /// payload segment, or a signature segment that does not match the header's `alg`.
        public static let malformed = Self(.malformed)
        /// A segment is not strict base64url (RFC 7515 section 2): padding, `+` or `/`, whitespace,
        /// a length of 1 mod 4, or non-zero trailing bits.
        public static let invalidBase64 = Self(.invalidBase64)
        /// The decoded header or payload is not valid UTF-8.
        public static let invalidUTF8 = Self(.invalidUTF8)
        /// The decoded header or payload is not JSON (RFC 8259), nests deeper than the limit, holds a
        /// number out of range, or a string with a lone surrogate escape.
        public static let invalidJSON = Self(.invalidJSON)
        /// The decoded header or payload is JSON, but not a JSON object.
        public static let notAnObject = Self(.notAnObject)
        /// A member name appears twice in one JSON object of the header or payload, at any depth.
        public static let duplicateClaim = Self(.duplicateClaim)
        /// The header lacks a string `alg` (RFC 7515 section 4.1.1).
        public static let invalidHeader = Self(.invalidHeader)
        /// A registered claim has the wrong type or range (`exp`, `nbf`, `iat`, `iss`, `sub`, `aud`,
        /// `scope`, `login_provider`).
        public static let invalidClaim = Self(.invalidClaim)
        /// There is no `sub` claim, or it is the empty string.
        public static let missingSubject = Self(.missingSubject)

        /// The code's name, such as `duplicateClaim`.
        public var description: String { base.rawValue }

        /// What a caller or a person can do about an error with this code.
        var advice: String {
            switch base {
            case .tooLong:
                "check that the value is a single token and not a concatenation or a file's contents"
            case .malformed, .invalidBase64:
                "pass the JWS compact serialization exactly as the issuer sent it (three base64url segments "
                    + "joined by dots, no whitespace or padding)"
            case .invalidUTF8, .invalidJSON, .notAnObject, .duplicateClaim, .invalidHeader:
                "the issuer produced a token that is not a valid JWT; obtain a new one and report it to the issuer"
            case .invalidClaim, .missingSubject:
                "the token does not carry the claims this library needs; log in again to obtain a new token"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people about what was found; never contains any part of the token.
    public let reason: String

    package init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// What happened and what to do; never contains any part of the token.
    public var description: String { "JWT \(code): \(reason); \(code.advice)" }

    /// Two errors are equal when their codes are; the reason is for people only.
    public static func == (lhs: JWTError, rhs: JWTError) -> Bool { lhs.code == rhs.code }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
