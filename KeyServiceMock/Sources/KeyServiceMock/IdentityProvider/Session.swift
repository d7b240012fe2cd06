import Foundation

/// A login: the refresh-token family every rotation of its refresh token belongs to.
struct Session: Sendable {
    let id: String
    let subject: String
    let username: String
    let clientId: String
    let scope: String
    let loginProvider: String
    let authTime: Date
    /// The `jti` of the one refresh token of the family that may still be used.
    var currentRefreshTokenId: String
    var revoked: Bool
}
