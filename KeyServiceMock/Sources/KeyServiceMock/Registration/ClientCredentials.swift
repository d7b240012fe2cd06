import Foundation
import KeyServiceCore
import VaultCrypto

/// What a request to the token, revocation or introspection endpoint presents to authenticate its client (RFC 6749
/// section 2.3, RFC 7523 section 2.2), read but not yet checked.
struct ClientCredentials {
    /// The client id and secret of an HTTP Basic `Authorization` header, each form-urldecoded (RFC 6749 section
    /// 2.3.1).
    let basic: (clientId: String, secret: String)?
    /// The whole form, the grant's fields with the credentials.
    let fields: FormFields
    let clientIdField: String?
    let secretField: String?
    let assertionType: String?
    let assertion: String?

    /// Reads the credentials of a request with the `Authorization` header `authorization` and the form `fields`.
    /// - Throws: ``RequestRefusal`` 401 `invalid_client` for a Basic header that is not base64 of `id:secret`.
    init(authorization: String?, fields: FormFields) throws(RequestRefusal) {
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            let encoded = authorization.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
            guard let decoded = Data(base64Encoded: encoded).flatMap({ String(data: $0, encoding: .utf8) }),
                let colon = decoded.firstIndex(of: ":"),
                let clientId = PercentEncoding.decodeFormComponent(decoded[..<colon]),
                let secret = PercentEncoding.decodeFormComponent(decoded[decoded.index(after: colon)...]),
                !clientId.isEmpty
            else {
                throw .clientAuthenticationFailed(
                    "the Basic credentials must be base64 of CLIENT_ID:SECRET, each form-urlencoded first "
                        + "(RFC 6749 section 2.3.1)"
                )
            }
            basic = (clientId, secret)
        } else {
            basic = nil
        }
        self.fields = fields
        clientIdField = fields["client_id"]
        secretField = fields["client_secret"]
        assertionType = fields["client_assertion_type"]
        assertion = fields["client_assertion"]
    }

    /// Whether the request presents any credential beyond a `client_id`.
    var presentsCredential: Bool {
        basic != nil || secretField != nil || assertion != nil
    }

    /// How many authentication methods the request uses at once; RFC 6749 section 2.3 allows one.
    var methodCount: Int {
        [basic != nil, secretField != nil, assertion != nil].filter { $0 }.count
    }

    /// The client the request names: Basic's, else `client_id`, else the assertion's `iss`, read unverified only
    /// to find the client whose keys then verify it.
    var clientId: String? {
        basic?.clientId ?? clientIdField ?? assertion.flatMap(Self.unverifiedIssuer)
    }

    private static func unverifiedIssuer(of assertion: String) -> String? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = try? Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        else { return nil }
        return claims["iss"] as? String
    }
}
