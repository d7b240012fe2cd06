import Foundation
import JWTKit

/// A registered client as the server keeps it: its metadata and keys, and the keyed hashes (under the pepper) of
/// its secret and registration access token, never the values.
struct ClientRegistration: Sendable {
    var client: RegisteredClient
    var keys: [String: JWK]
    let method: TokenEndpointAuthMethod
    /// The keyed hash of the `client_secret`, for the `client_secret_*` methods.
    let secretHash: Data?
    /// The keyed hash of the `registration_access_token` (RFC 7592).
    let accessTokenHash: Data

    /// Whether the client registered a grant that allows `grantType`: `authorization_code` brings
    /// `refresh_token` with it (a code-flow client refreshes the tokens it got).
    func allows(grantType: String) -> Bool {
        let registered = client.grantTypes
        switch grantType {
        case "refresh_token": return registered.contains("refresh_token") || registered.contains("authorization_code")
        case "authorization_code", "client_credentials": return registered.contains(grantType)
        default: return false
        }
    }

    /// The client information response (RFC 7591 section 3.2.1, RFC 7592 section 3): the metadata, and the
    /// secret and registration access token when the request that this answers had them in hand.
    func answer(
        clientSecret: String?,
        registrationAccessToken: String,
        registrationClientURI: String
    ) -> [String: Any] {
        var answer: [String: Any] = [
            "client_id": client.clientId,
            "client_id_issued_at": Int(client.clientIdIssuedAt.timeIntervalSince1970),
            "registration_access_token": registrationAccessToken,
            "registration_client_uri": registrationClientURI,
            "token_endpoint_auth_method": method.rawValue,
            "redirect_uris": client.redirectURIs,
            "grant_types": client.grantTypes,
            "response_types": client.responseTypes,
        ]
        if method.hasSecret {
            // The secret never expires; it is shown at registration only (the server keeps its hash).
            answer["client_secret_expires_at"] = 0
            answer["client_secret"] = clientSecret
        }
        answer["client_name"] = client.clientName
        answer["scope"] = client.scope
        if let jwks = client.jwks {
            answer["jwks"] = try? JSONSerialization.jsonObject(with: Data(jwks.utf8))
        }
        return answer
    }
}
