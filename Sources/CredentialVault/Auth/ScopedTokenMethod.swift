/// How ``Auth/getAccessToken(resource:scopes:method:)`` asks the issuer for a token scoped to one resource.
public enum ScopedTokenMethod: Sendable, Hashable {
    /// A refresh_token grant with RFC 8707's `resource` (and `scope` when narrower scopes are asked for). A refresh
    /// token the issuer rotates in that answer is sealed into the envelope as at every refresh.
    case refresh
    /// Token exchange (RFC 8693): the session's access token is traded for one for the resource; the refresh token
    /// is not sent and never rotates.
    case tokenExchange
    /// Token exchange when the issuer's discovery lists its grant type in `grant_types_supported`, else
    /// ``refresh``.
    case automatic
}
