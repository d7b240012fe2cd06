public import Foundation
import VaultCrypto

/// A JSON Web Token (RFC 7519) read from its JWS compact serialization, with typed access to its claims.
///
/// - Important: Decoding does **not** verify the signature. A `JWT` tells you what a token *says*,
///   not that its issuer said it: trust its claims only as far as you trust where the string came
///   from (for example, a token endpoint reached over TLS). An unsecured token (`alg` "none") decodes
///   too; check ``isUnsecured`` where a signature is expected.
///
/// The header and the claims set are decoded once, in ``init(token:)``, and kept; the typed
/// properties and the subscript read from that. `description`, `debugDescription` and the mirror
/// never show the token or any of its segments.
public struct JWT: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The longest token accepted, in UTF-8 bytes (16 KiB); longer input is refused before it is split.
    public static let maximumLength = 16 * 1024

    /// The NumericDate values accepted for `exp`, `nbf` and `iat`: seconds from 1970-01-01T00:00:00Z
    /// to 9999-12-31T23:59:59Z, fractions allowed. Earlier or later values are refused as
    /// ``JWTError/Code/invalidClaim``: no issuer means them, and a bound keeps date arithmetic finite.
    public static let numericDateRange: ClosedRange<Double> = 0...253_402_300_799

    /// The token exactly as given.
    public let token: String
    /// The decoded protected header (always has a string `alg`).
    public let header: [String: JSONValue]
    /// The decoded claims set.
    public let claims: [String: JSONValue]
    /// The `sub` claim: a non-empty string.
    public let userId: String
    /// The `exp` claim, if present.
    public let expireDate: Date?
    /// The `iss` claim, if present.
    public let issuer: String?
    /// The `login_provider` claim (a TIM claim), if present.
    public let loginProvider: String?
    /// The `aud` claim: one string or an array of strings; `[]` when absent.
    public let audience: [String]
    /// The `iat` claim, if present.
    public let issuedAt: Date?
    /// The `nbf` claim, if present.
    public let notBefore: Date?
    /// The `scope` claim split at spaces (an array of strings is taken as is); `[]` when absent.
    public let scope: [String]

    /// Decodes `token` strictly, without verifying its signature.
    ///
    /// Rules: at most ``maximumLength`` bytes; exactly three dot-separated segments; header and payload
    /// non-empty strict base64url (RFC 7515 section 2) of UTF-8 JSON objects with no member name twice at
    /// any depth; a header with a string `alg`; a signature segment that is empty exactly when `alg` is
    /// "none" in any letter case (RFC 7519 section 6), otherwise strict base64url. Claims: `sub` a
    /// non-empty string; `exp`, `nbf`, `iat` JSON numbers within ``numericDateRange``; `iss` and
    /// `login_provider` strings; `aud` a string or an array of strings; `scope` a string or an array of
    /// strings.
    ///
    /// - Important: This does **not** verify the signature.
    /// - Throws: ``JWTError``; its description never contains any part of `token`.
    public init(token: String) throws(JWTError) {
        let (header, claims) = try Self.decodeSegments(token)
        self.token = token
        self.header = header
        self.claims = claims

        switch claims["sub"] {
        case nil: throw JWTError(.missingSubject, "the payload has no sub claim")
        case .string(let subject) where subject.isEmpty: throw JWTError(.missingSubject, "the sub claim is empty")
        case .string(let subject): userId = subject
        default: throw JWTError(.invalidClaim, "the sub claim is not a string")
        }
        issuer = try Self.optionalString("iss", in: claims)
        loginProvider = try Self.optionalString("login_provider", in: claims)
        expireDate = try Self.numericDate("exp", in: claims)
        notBefore = try Self.numericDate("nbf", in: claims)
        issuedAt = try Self.numericDate("iat", in: claims)

        switch claims["aud"] {
        case nil: audience = []
        case .string(let single): audience = [single]
        case let value?:
            guard let many = value.stringArrayValue else {
                throw JWTError(.invalidClaim, "the aud claim is neither a string nor an array of strings")
            }
            audience = many
        }

        switch claims["scope"] {
        case nil: scope = []
        case .string(let list): scope = list.split(separator: " ").map(String.init)
        case let value?:
            guard let many = value.stringArrayValue else {
                throw JWTError(.invalidClaim, "the scope claim is neither a string nor an array of strings")
            }
            scope = many
        }
    }

    /// The header's `alg`.
    public var algorithm: String { header["alg"]?.stringValue ?? "" }

    /// `true` when `alg` is "none" in any letter case: the token carries no signature at all.
    public var isUnsecured: Bool { Self.isNone(algorithm) }

    /// The claim `key` as `Value`, or `nil` when it is absent or has another shape.
    ///
    /// `Value` may be `String`, `Int` (whole numbers only), `Double`, `Bool`, `Date` (from a NumericDate),
    /// `[String]`, `[JSONValue]`, `[String: JSONValue]` (nested objects) or ``JSONValue``. Reads the
    /// claims decoded at init; nothing is decoded again.
    public subscript<Value>(_ key: String) -> Value? {
        claims[key]?.converted(to: Value.self)
    }

    /// Whether the token has expired at `now`: `true` when `now >= exp + leeway`.
    ///
    /// RFC 7519 section 4.1.4: the token must not be accepted on or after its expiration time, so a
    /// token is already expired at `exp` itself. A positive `leeway` tolerates clock skew; a negative one
    /// reports expiry that much early (useful for refreshing ahead of time). A token without `exp` never
    /// expires.
    public func isExpired(leeway: TimeInterval = 0, now: Date = Date()) -> Bool {
        guard let expireDate else { return false }
        return now >= expireDate.addingTimeInterval(leeway)
    }

    /// Whether the token is not valid yet at `now`: `true` when `now < nbf - leeway`. A token without `nbf`
    /// is valid from the start.
    public func isNotYetValid(leeway: TimeInterval = 0, now: Date = Date()) -> Bool {
        guard let notBefore else { return false }
        return now < notBefore.addingTimeInterval(-leeway)
    }

    /// `JWT(sub: "…", exp: …)`: never the token or any segment of it.
    public var description: String {
        "JWT(sub: \(Self.quoted(userId)), exp: \(expireDate.map { $0.ISO8601Format() } ?? "none"))"
    }

    /// Like ``description`` with the issuer, the algorithm and the number of claims; never the token.
    public var debugDescription: String {
        "JWT(sub: \(Self.quoted(userId)), iss: \(issuer.map(Self.quoted) ?? "none"), "
            + "exp: \(expireDate.map { $0.ISO8601Format() } ?? "none"), alg: \(Self.quoted(algorithm)), "
            + "claims: \(claims.count))"
    }

    /// A mirror without the token, so `dump` and debuggers do not print it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "userId": userId, "issuer": issuer as Any, "expireDate": expireDate as Any, "algorithm": algorithm,
            ],
            displayStyle: .struct
        )
    }

    /// Two JWTs are equal when their tokens are: everything else is decoded from the token.
    public static func == (lhs: JWT, rhs: JWT) -> Bool { lhs.token == rhs.token }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }
}

extension JWT {
    /// Splits and decodes `token` into its header and claims set under the rules of ``init(token:)``,
    /// except that no claim is required or checked. Does not verify the signature.
    package static func decodeSegments(
        _ token: String
    ) throws(JWTError) -> (header: [String: JSONValue], claims: [String: JSONValue]) {
        let length = token.utf8.count
        guard length <= maximumLength else {
            throw JWTError(.tooLong, "the token is \(length) bytes, over the limit of \(maximumLength)")
        }
        // At most three splits: a token of dots costs no more than one with three segments.
        let segments = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw JWTError(.malformed, "the token does not have exactly three dot-separated segments")
        }
        guard !segments[0].isEmpty else { throw JWTError(.malformed, "the header segment is empty") }
        guard !segments[1].isEmpty else { throw JWTError(.malformed, "the payload segment is empty") }

        let header = try decodeObject(segments[0], named: "header")
        guard case .string(let algorithm) = header["alg"] else {
            throw JWTError(.invalidHeader, "the header has no string alg")
        }
        let claims = try decodeObject(segments[1], named: "payload")

        let signature = segments[2]
        if isNone(algorithm) {
            // RFC 7518 section 3.6: an unsecured JWS has an empty signature.
            guard signature.isEmpty else {
                throw JWTError(.malformed, "alg is none but the signature segment is not empty")
            }
        } else {
            // An empty signature under a signing alg is how signature-stripping attacks look.
            guard !signature.isEmpty else {
                throw JWTError(.malformed, "the signature segment is empty but alg names a signing algorithm")
            }
            _ = try decodeBase64URL(signature, named: "signature", inConstantTime: true)
        }
        return (header, claims)
    }

    /// `segment` decoded: `inConstantTime` for the signature, which is what makes a bearer token unguessable, and by
    /// table (``PublicBase64URL``) for the header and the payload, which anyone holding the token reads anyway.
    private static func decodeBase64URL(
        _ segment: Substring.UTF8View,
        named name: String,
        inConstantTime: Bool = false
    ) throws(JWTError) -> Data {
        do {
            let text = Substring(segment)
            return try inConstantTime ? Base64URL.decode(text) : PublicBase64URL.decode(text)
        } catch {
            throw JWTError(.invalidBase64, "the \(name) segment is not strict base64url")
        }
    }

    /// The header and claims of `token` with every number as written in it, for showing what a token says
    /// exactly: ``decodeSegments(_:)``'s rules, then the two segments parsed again into ``ExactJSONValue``s.
    /// - Throws: ``JWTError``, as ``decodeSegments(_:)`` does.
    package static func exactSegments(
        _ token: String
    ) throws(JWTError) -> (header: [String: ExactJSONValue], claims: [String: ExactJSONValue]) {
        _ = try decodeSegments(token)
        let segments = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        return (
            try decodeObject(segments[0], named: "header", as: ExactJSONValue.self),
            try decodeObject(segments[1], named: "payload", as: ExactJSONValue.self)
        )
    }

    private static func decodeObject<Value: StrictJSONTree>(
        _ segment: Substring.UTF8View,
        named name: String,
        as type: Value.Type = JSONValue.self
    ) throws(JWTError) -> [String: Value] {
        let bytes = try decodeBase64URL(segment, named: name)
        let value: Value
        do {
            value = try StrictJSONParser.parse(Array(bytes), as: type)
        } catch {
            switch error {
            case .invalidUTF8:
                throw JWTError(.invalidUTF8, "the \(name) is not valid UTF-8")
            case .invalid(let detail):
                throw JWTError(.invalidJSON, "the \(name) is not valid JSON: \(detail)")
            case .tooDeep:
                throw JWTError(
                    .invalidJSON,
                    "the \(name) nests objects and arrays deeper than \(StrictJSONParser.maximumDepth) levels"
                )
            case .duplicateMember:
                throw JWTError(.duplicateClaim, "the \(name) has a member name twice in one object")
            }
        }
        guard let members = value.objectValue else {
            throw JWTError(.notAnObject, "the \(name) is JSON but not a JSON object")
        }
        return members
    }

    private static func optionalString(_ name: String, in claims: [String: JSONValue]) throws(JWTError) -> String? {
        switch claims[name] {
        case nil: return nil
        case .string(let value): return value
        default: throw JWTError(.invalidClaim, "the \(name) claim is not a string")
        }
    }

    private static func numericDate(_ name: String, in claims: [String: JSONValue]) throws(JWTError) -> Date? {
        switch claims[name] {
        case nil:
            return nil
        case .number(let seconds):
            guard numericDateRange.contains(seconds) else {
                throw JWTError(.invalidClaim, "the \(name) claim is outside the years 1970 to 9999")
            }
            return Date(timeIntervalSince1970: seconds)
        default:
            throw JWTError(.invalidClaim, "the \(name) claim is not a JSON number (RFC 7519 NumericDate)")
        }
    }

    /// ASCII case-insensitive "none"; a Unicode case mapping could fold other characters into it.
    private static func isNone(_ algorithm: String) -> Bool {
        let folded = algorithm.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        return folded.elementsEqual("none".utf8)
    }

    /// The text quoted and escaped, cut to 64 characters, for descriptions.
    static func quoted(_ text: String) -> String {
        let limit = 64
        guard text.count > limit else { return String(reflecting: text) }
        return String(reflecting: String(text.prefix(limit))) + "…"
    }
}
