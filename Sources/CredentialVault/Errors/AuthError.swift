/// Why logging in, refreshing or logging out failed (THP's `THPAuthError`).
public enum AuthError: Error, Sendable, CustomStringConvertible {
    /// The issuer answered `invalid_grant`: the refresh token expired or was revoked. The session ended.
    case refreshTokenExpired
    /// The issuer could not be reached.
    case networkError(host: String, reason: String)
    /// The token endpoint answered, but not with a usable access token.
    case failedToGetAccessToken(reason: String)
    /// The token endpoint answered without a refresh token where one was needed.
    case failedToGetRefreshToken
    /// OpenID Connect discovery failed.
    case failedToDiscoverConfiguration(reason: String)
    /// No session: log in first.
    case notLoggedIn
    /// The OpenID Connect redirect was not the answer to our request (state mismatch), or carried an error.
    case openIDConnectFailed(reason: String)
    /// The configuration is not usable.
    case invalidConfiguration(reason: String)
    /// Revoking the refresh token at logout failed; local data was still cleared as asked.
    case revocationFailed(reason: String)

    public var description: String {
        switch self {
        case .refreshTokenExpired:
            "The refresh token expired or was revoked. Log in with OpenID Connect again (`vault register`)."
        case .networkError(let host, let reason): "Could not reach \(host): \(reason)."
        case .failedToGetAccessToken(let reason): "The token endpoint gave no usable access token: \(reason)."
        case .failedToGetRefreshToken: "The token endpoint gave no refresh token; ask for the offline_access scope."
        case .failedToDiscoverConfiguration(let reason): "OpenID Connect discovery failed: \(reason)."
        case .notLoggedIn: "Not logged in. Log in with the password first."
        case .openIDConnectFailed(let reason): "The OpenID Connect login failed: \(reason)."
        case .invalidConfiguration(let reason): "The configuration is not usable: \(reason)."
        case .revocationFailed(let reason):
            "Logged out locally, but the refresh token could not be revoked at the issuer: \(reason)."
        }
    }
}
