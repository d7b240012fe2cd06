import Foundation

/// What an issuer's discovery says a `private_key_jwt` assertion may name and be signed with: the token endpoint
/// and the issuer identifier (the two `aud` values of RFC 7523 section 3), and
/// `token_endpoint_auth_signing_alg_values_supported`.
struct AssertionAudiences: Sendable {
    /// The token endpoint's URL, as discovery states it.
    let tokenEndpoint: URL
    /// The issuer identifier, as discovery states it (else the configured issuer URL).
    let issuer: String
    /// `token_endpoint_auth_signing_alg_values_supported`, when discovery lists it.
    let signingAlgorithms: [String]?

    /// The `aud` of an assertion for `choice`.
    func audience(_ choice: ClientAssertionAudience) -> String {
        switch choice {
        case .tokenEndpoint: tokenEndpoint.absoluteString
        case .issuer: issuer
        }
    }
}
