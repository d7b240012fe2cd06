/// What a `private_key_jwt` client assertion names as its `aud` (RFC 7523 section 3).
///
/// RFC 7523 and SMART App Launch ("the token URL") name the token endpoint, and servers such as Authlib's accept
/// only that, at every endpoint the client authenticates at: the token endpoint, introspection and revocation. So
/// ``tokenEndpoint`` is the default for all three. A few servers want the issuer identifier instead (RFC 7523
/// section 3 allows it): ``issuer`` is for them.
public enum ClientAssertionAudience: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The token endpoint's URL, as discovery states it, whichever endpoint the assertion goes to (the default).
    case tokenEndpoint
    /// The issuer identifier, as discovery states it (else the configured issuer URL).
    case issuer

    /// The setting's name: `tokenEndpoint` or `issuer`.
    public var description: String { rawValue }
}
