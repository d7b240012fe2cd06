public import Foundation

/// An access token as the issuer gave it: opaque or a JWT, for the resource server to read, not for us.
///
/// Most servers issue opaque access tokens; some issue JWTs. Either way ``token`` is what goes into an
/// `Authorization: Bearer` header. When the token happens to be a JWT, ``jwt`` is its decoded view and the
/// subscript reads its claims (THP's `THPJWT` shape); nothing here depends on that. ``userId`` is the vault's
/// user (the verified id_token's `sub`, or the name the caller logged in with), never a claim of this token.
///
/// `description`, `debugDescription` and the mirror never show the token.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The token exactly as the issuer gave it (a secret: never log it).
    public let token: String
    /// The user of the session this token belongs to.
    public let userId: String
    /// When the token expires: its `exp` when it is a JWT that has one, else `expires_in` from the token
    /// answer; nil when neither says (it is then refreshed at every use).
    public let expireDate: Date?
    /// The token decoded as a JWT (unverified: the resource server checks it), or nil when it is opaque or
    /// not a JWT this library can read.
    public let jwt: JWT?
    /// The token's type as the issuer answered it: `Bearer`, or `DPoP` for a token bound to the login's key (RFC
    /// 9449), which goes out as `Authorization: DPoP <token>` with a proof (``Auth/authorizing(_:)``).
    public let tokenType: String

    /// Whether the token is bound to the login's DPoP key (``tokenType`` `DPoP`).
    public var isDPoPBound: Bool { tokenType == Self.dpopType }

    /// ``tokenType`` of a token bound to a key.
    public static let dpopType = "DPoP"

    /// A token from a token answer: `expiresIn` is the answer's `expires_in`, counted from `now`; `tokenType` is the
    /// answer's `token_type` (any spelling of `DPoP` is ``dpopType``, anything else `Bearer`).
    package init(token: String, userId: String, expiresIn: TimeInterval?, now: Date, tokenType: String? = nil) {
        self.token = token
        self.userId = userId
        self.tokenType = tokenType?.lowercased() == "dpop" ? Self.dpopType : "Bearer"
        let jwt = try? JWT(token: token)
        self.jwt = jwt
        expireDate = jwt?.expireDate ?? expiresIn.map { now.addingTimeInterval($0) }
    }

    /// The claim `key` as `Value` when the token is a JWT (see ``JWT/subscript(_:)``); nil for an opaque token.
    public subscript<Value>(_ key: String) -> Value? {
        jwt?[key]
    }

    /// `AccessToken(user: "…", exp: …, jwt)`: never the token.
    public var description: String {
        "AccessToken(user: \(JWT.quoted(userId)), exp: \(expireDate.map { $0.ISO8601Format() } ?? "none"), "
            + "\(jwt == nil ? "opaque" : "jwt"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the token, so `dump` and debuggers do not print it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["userId": userId, "expireDate": expireDate as Any, "isJWT": jwt != nil],
            displayStyle: .struct
        )
    }

    /// Two access tokens are equal when their tokens and users are.
    public static func == (lhs: AccessToken, rhs: AccessToken) -> Bool {
        lhs.token == rhs.token && lhs.userId == rhs.userId
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(token)
        hasher.combine(userId)
    }
}
