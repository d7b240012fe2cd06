import Foundation

/// A login, as the token endpoint issues for it: the refresh-token family every rotation belongs to.
///
/// Only the issuing request sees the ids in clear; the state keeps their keyed hashes (``SessionRecord``).
struct Session: Sendable {
    /// The session id: `sid`, `family_id` and `session_state` of the tokens issued for it.
    let id: String
    let record: SessionRecord
    /// The `jti` of the refresh token to issue now: the one token of the family that may be used next.
    let refreshTokenId: String

    var subject: String { record.subject }
    var username: String { record.username }
    var clientId: String { record.clientId }
    var scope: String { record.scope }
    var loginProvider: String { record.loginProvider }
    var authTime: Date { record.authTime }
}

/// A login as the state keeps it: everything but its ids, which are kept as keyed hashes.
struct SessionRecord: Sendable {
    let subject: String
    let username: String
    let clientId: String
    let scope: String
    let loginProvider: String
    let authTime: Date
    /// The keyed hash of the `jti` of the one refresh token of the family that may still be used.
    var refreshTokenHash: Data
    var revoked: Bool
}
