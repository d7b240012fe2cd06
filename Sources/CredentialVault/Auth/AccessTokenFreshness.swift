package import Foundation

/// How long a new access token is handed out before the next call refreshes it: the one rule, which ``Auth`` applies
/// to every token it keeps (the CLI's agent serves ``Auth/getAccessToken(forceRefresh:)``, so the same rule), and
/// the SMART backend client to its `client_credentials` tokens.
///
/// - The lifetime is what the issuer stated as a duration: `expires_in`, and `exp - iat` of a JWT access token (both
///   on the issuer's clock); the shorter when both are there. Only a JWT with `exp` and neither of those is measured
///   against the device's wall clock (`exp - now`): nothing else says how long it lives.
/// - It is counted on the device's monotonic clock from the moment the request was sent, which is no later than the
///   moment the issuer counted from, less one second (issuers state times in whole seconds, so `exp` may fall up to a
///   second before that count ends): a wall clock set minutes wrong changes nothing, and no token is handed out past
///   its end.
/// - The leeway is the configured one, but at most a quarter of what is left: with the default 60 s, a 300 s token is
///   handed out for 239 s and a 2 s token for 0.75 s (a leeway longer than the lifetime would refresh at every call).
package enum AccessTokenFreshness {
    /// The instant `token` stops being handed out, or nil when nothing says when it expires (it is then refreshed at
    /// every use rather than trusted forever).
    /// - Parameters:
    ///   - token: the new access token; its `exp` and `iat` count when it is a JWT.
    ///   - expiresIn: the answer's `expires_in`, in seconds.
    ///   - requestedAt: the monotonic instant the request was sent.
    ///   - wallClock: the device's wall-clock time, for a JWT that states nothing but `exp`.
    ///   - configured: the configured leeway, in seconds; at most a quarter of the lifetime is taken.
    /// - Returns: an instant of the monotonic clock; nil when neither the answer nor the token states a lifetime.
    package static func freshUntil(
        _ token: AccessToken,
        expiresIn: TimeInterval?,
        requestedAt: ContinuousClock.Instant,
        wallClock: Date,
        leeway configured: TimeInterval
    ) -> ContinuousClock.Instant? {
        guard let stated = lifetime(expiresIn: expiresIn, jwt: token.jwt, wallClock: wallClock) else { return nil }
        let lifetime = max(stated - 1, 0)
        return requestedAt.advanced(by: .seconds(lifetime - leeway(configured, lifetime: lifetime)))
    }

    /// Seconds the token lives, 0 or more, or nil when nothing says.
    static func lifetime(expiresIn: TimeInterval?, jwt: JWT?, wallClock: Date) -> TimeInterval? {
        var stated: [TimeInterval] = []
        if let expiresIn { stated.append(expiresIn) }
        if let expiry = jwt?.expireDate, let issued = jwt?.issuedAt { stated.append(expiry.timeIntervalSince(issued)) }
        if stated.isEmpty, let expiry = jwt?.expireDate { stated.append(expiry.timeIntervalSince(wallClock)) }
        return stated.min().map { min(max($0, 0), TokenEndpoint.maximumLifetime) }
    }

    /// The configured leeway, at most a quarter of `lifetime` (seconds).
    static func leeway(_ configured: TimeInterval, lifetime: TimeInterval) -> TimeInterval {
        min(max(configured, 0), lifetime / 4)
    }
}
