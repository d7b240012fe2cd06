import Foundation

/// A successful token-endpoint answer (RFC 6749 section 5.1). Holds secrets; `description` shows none.
struct TokenResponse: Sendable, CustomStringConvertible {
    let accessToken: String
    let refreshToken: String?
    let idToken: String?
    /// Seconds from `expires_in`, clamped to 0 ... one year; nil when absent or not a finite number
    /// (``TokenEndpoint/lifetime(expiresIn:)``).
    let expiresIn: TimeInterval?

    var description: String { "TokenResponse(redacted)" }
}
