/// The token endpoint's success body (RFC 6749 section 5.1, plus Keycloak's extra fields and, in the SMART
/// mode, the launch context of SMART App Launch 2 and one unknown field a client must keep).
struct TokenResponse: Encodable {
    let accessToken: String
    var tokenType: String
    let expiresIn: Int
    let refreshToken: String
    let refreshExpiresIn: Int
    let idToken: String?
    let scope: String
    let sessionState: String
    var patient: String? = nil
    var encounter: String? = nil
    var needPatientBanner: Bool? = nil
    var smartStyleURL: String? = nil
    var fhirContext: [JSONValue]? = nil
    var intent: String? = nil
    var tenant: String? = nil
    /// A field no specification defines, sent so a client can be tested for keeping what it does not know.
    var mockSite: JSONValue? = nil

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case refreshExpiresIn = "refresh_expires_in"
        case idToken = "id_token"
        case scope
        case sessionState = "session_state"
        case patient, encounter, fhirContext, intent, tenant
        case needPatientBanner = "need_patient_banner"
        case smartStyleURL = "smart_style_url"
        case mockSite = "x-mock-site"
    }
}

/// The token endpoint's answer to a SMART backend client's `client_credentials` grant: an opaque access token
/// and its scope, with no refresh token, id token or launch context (SMART Backend Services).
struct ClientCredentialsTokenResponse: Encodable {
    let accessToken: String
    let tokenType: String
    let expiresIn: Int
    let scope: String
    /// The SMART mode's field no specification defines, as in its other token answers.
    let mockSite: JSONValue

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case scope
        case mockSite = "x-mock-site"
    }
}
