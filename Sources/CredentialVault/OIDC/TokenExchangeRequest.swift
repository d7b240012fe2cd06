import Foundation

/// A token-exchange request (RFC 8693 section 2.1): the session's access token as the subject, for one resource.
struct TokenExchangeRequest: Sendable, CustomStringConvertible {
    /// The grant type's URN.
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    /// The token type of an access token (RFC 8693 section 3).
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// The access token traded (a secret: never logged, never in ``description``).
    let subjectToken: String
    /// The resource the new token is for: sent as `resource` (RFC 8707) and as `audience`.
    let resource: String
    /// `scope`, space-separated; nil to leave the scope to the issuer.
    let scope: String?

    /// The form fields of the request.
    var fields: [String: String] {
        var fields = [
            "grant_type": Self.grantType,
            "subject_token": subjectToken,
            "subject_token_type": Self.accessTokenType,
            "requested_token_type": Self.accessTokenType,
            "resource": resource,
            "audience": resource,
        ]
        if let scope { fields["scope"] = scope }
        return fields
    }

    /// Never the subject token.
    var description: String { "TokenExchangeRequest(resource: \(resource), subjectToken: redacted)" }
}
