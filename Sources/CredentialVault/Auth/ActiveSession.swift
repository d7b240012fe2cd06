import Foundation
import Synchronization

/// What ``Auth`` holds while a user is signed in.
struct ActiveSession: Sendable {
    /// Tells this session from a later one, so a refresh that outlived its session changes nothing: a number no
    /// other session of the process had. (A `UUID` cost every login an open, a read and a close of `/dev/urandom`,
    /// issue 23.)
    let id = Self.sessions.add(1, ordering: .relaxed).newValue
    let userId: String
    var refreshToken: RefreshToken
    /// The user's envelope, unlocked, so rotated refresh tokens are sealed before use; nil after an OpenID
    /// Connect login until a password is set (rotated tokens then live in memory only).
    var envelope: UnlockedEnvelope?

    /// The sessions the process began.
    private static let sessions = Atomic<UInt64>(0)
}
