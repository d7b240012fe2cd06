/// The claims of every token this provider issues (access, id and refresh tokens alike).
struct TokenClaims: Codable, Sendable {
    /// `Bearer` for an access token, `ID` for an id token, `Refresh` for a refresh token (as Keycloak).
    var typ: String
    var iss: String
    var sub: String
    var aud: String
    var azp: String
    var exp: Int
    var iat: Int
    var jti: String
    var scope: String
    var loginProvider: String
    /// The session, which is also the refresh-token family.
    var sid: String
    var preferredUsername: String?
    var nonce: String?
    var authTime: Int?
    /// The authentication context class and methods of an id token (``MockAuthentication``).
    var acr: String?
    var amr: [String]?
    var familyId: String?
    /// The SMART user of an id token (`Practitioner/...` or `Patient/...`), relative to the FHIR base.
    var fhirUser: String?

    enum CodingKeys: String, CodingKey {
        case typ, iss, sub, aud, azp, exp, iat, jti, scope, sid, nonce, fhirUser, acr, amr
        case loginProvider = "login_provider"
        case preferredUsername = "preferred_username"
        case authTime = "auth_time"
        case familyId = "family_id"
    }
}
