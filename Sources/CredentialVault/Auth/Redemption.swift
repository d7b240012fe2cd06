import Foundation

/// One refresh_token grant, done: the tokens it gave and how long its steps took.
struct Redemption: Sendable {
    let accessToken: AccessToken
    let refreshToken: RefreshToken
    let tokenEndpointTime: Duration
    let persistTime: Duration
}
