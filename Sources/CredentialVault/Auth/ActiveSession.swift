import Foundation

/// What ``Auth`` holds while a user is signed in.
struct ActiveSession: Sendable {
    /// Tells this session from a later one, so a refresh that outlived its session changes nothing.
    let id = UUID()
    let userId: String
    var refreshToken: RefreshToken
    /// The user's envelope, unlocked, so rotated refresh tokens are sealed before use; nil after an OpenID
    /// Connect login until a password is set (rotated tokens then live in memory only).
    var envelope: UnlockedEnvelope?
}
