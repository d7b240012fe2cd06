import Foundation

/// One refresh_token grant, done: the tokens it gave and how long its steps took.
struct Redemption: Sendable {
    let accessToken: AccessToken
    /// When the access token stops being handed out (``AccessTokenFreshness``); nil when nothing says.
    let freshUntil: ContinuousClock.Instant?
    let refreshToken: RefreshToken
    let tokenEndpointTime: Duration
    let persistTime: Duration
}
