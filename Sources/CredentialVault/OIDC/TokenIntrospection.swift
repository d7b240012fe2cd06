public import Foundation

/// What an issuer says about a token (RFC 7662 section 2.2): whether it is active, and for an active one its scope,
/// client, subject and times. Holds no token.
public struct TokenIntrospection: Sendable, Hashable {
    /// `active`: whether the token is valid now. An inactive answer says nothing else.
    public let active: Bool
    /// `scope`, as the issuer states it.
    public let scope: String?
    /// `client_id`: the client the token was issued to.
    public let clientId: String?
    /// `sub`: the subject.
    public let subject: String?
    /// `username`, when stated.
    public let username: String?
    /// `token_type`, such as `Bearer`.
    public let tokenType: String?
    /// `exp`.
    public let expireDate: Date?
    /// `iat`.
    public let issuedAt: Date?
    /// Every field of the answer, as sent (a SMART server may add `patient`, for instance).
    public let fields: [String: JSONValue]

    /// The answer in `fields`; nil when it has no boolean `active`.
    init?(fields: [String: JSONValue]) {
        guard let active = fields["active"]?.boolValue else { return nil }
        self.active = active
        scope = fields["scope"]?.stringValue
        clientId = fields["client_id"]?.stringValue
        subject = fields["sub"]?.stringValue
        username = fields["username"]?.stringValue
        tokenType = fields["token_type"]?.stringValue
        expireDate = fields["exp"]?.dateValue
        issuedAt = fields["iat"]?.dateValue
        self.fields = fields
    }
}
