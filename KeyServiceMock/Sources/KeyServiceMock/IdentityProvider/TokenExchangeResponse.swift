/// The token endpoint's answer to a token exchange (RFC 8693 section 2.2.1): an access token for another audience,
/// no refresh token.
struct TokenExchangeResponse: Encodable {
    let accessToken: String
    let issuedTokenType: String
    let tokenType: String
    let expiresIn: Int
    let scope: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case issuedTokenType = "issued_token_type"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case scope
    }
}
