/// The token endpoint's success body (RFC 6749 section 5.1, plus Keycloak's extra fields).
struct TokenResponse: Encodable {
    let accessToken: String
    let tokenType: String
    let expiresIn: Int
    let refreshToken: String
    let refreshExpiresIn: Int
    let idToken: String?
    let scope: String
    let sessionState: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case refreshExpiresIn = "refresh_expires_in"
        case idToken = "id_token"
        case scope
        case sessionState = "session_state"
    }
}
