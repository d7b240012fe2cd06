import Foundation

/// A successful token-endpoint answer (RFC 6749 section 5.1). Holds secrets; `description` shows none.
struct TokenResponse: Sendable, CustomStringConvertible {
    let accessToken: String
    let refreshToken: String?
    let idToken: String?
    let expiresIn: TimeInterval?

    var description: String { "TokenResponse(redacted)" }
}
