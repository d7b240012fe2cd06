package import Foundation

/// A successful token-endpoint answer (RFC 6749 section 5.1). Holds secrets; `description` shows none.
package struct TokenResponse: Sendable, CustomStringConvertible {
    package let accessToken: String
    let refreshToken: String?
    let idToken: String?
    /// Seconds from `expires_in`, clamped to 0 ... one year; nil when absent or not a finite number
    /// (``TokenEndpoint/lifetime(expiresIn:)``).
    package let expiresIn: TimeInterval?
    /// Every other field of the answer (the granted `scope`, a SMART launch context, fields this library does not
    /// know), kept with the refresh token. Never the tokens themselves.
    package let context: [String: JSONValue]

    package var description: String { "TokenResponse(redacted)" }
}
