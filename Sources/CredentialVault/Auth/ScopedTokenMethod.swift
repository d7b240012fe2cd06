/// How ``Auth/getAccessToken(resource:scopes:method:)`` asks the issuer for a token scoped to one resource.
///
/// A struct of static values, not an enum, so a method added later breaks no caller's `switch` (the shape of
/// jwt-kit's `JWTError` and of ``VaultError/Kind``).
public struct ScopedTokenMethod: Sendable, Hashable, CustomStringConvertible {
    enum Base: String, Sendable, Hashable {
        case refresh
        case tokenExchange
        case automatic
    }

    let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// A refresh_token grant with RFC 8707's `resource` (and `scope` when narrower scopes are asked for). A refresh
    /// token the issuer rotates in that answer is sealed into the envelope as at every refresh.
    public static let refresh = Self(.refresh)
    /// Token exchange (RFC 8693): the session's access token is traded for one for the resource; the refresh token
    /// is not sent and never rotates.
    public static let tokenExchange = Self(.tokenExchange)
    /// Token exchange when the issuer's discovery lists its grant type in `grant_types_supported`, else
    /// ``refresh``.
    public static let automatic = Self(.automatic)

    /// The method's name (`refresh`, `tokenExchange`, `automatic`).
    public var description: String { base.rawValue }
}
