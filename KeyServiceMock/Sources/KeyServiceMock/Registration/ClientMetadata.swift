import Foundation
import JWTKit
import KeyServiceCore

/// The client metadata of a registration (RFC 7591 section 2) or of an update (RFC 7592 section 2.2), checked.
///
/// Unknown fields are ignored. Every refusal is a 400 `invalid_redirect_uri` or `invalid_client_metadata`
/// (RFC 7591 section 3.2.2) whose description names the rule.
struct ClientMetadata: Sendable {
    let tokenEndpointAuthMethod: TokenEndpointAuthMethod
    let redirectURIs: [String]
    let grantTypes: [String]
    let responseTypes: [String]
    let clientName: String?
    let scope: String?
    /// The JWK Set as JSON text, when the client sent one.
    let jwks: String?
    /// The keys of ``jwks`` by `kid`.
    let keys: [String: JWK]
    /// The `client_id` an update must carry (RFC 7592 section 2.2); `nil` when absent.
    let clientId: String?
    /// The `client_secret` an update may carry, which must then be the issued one; `nil` when absent.
    let clientSecret: String?

    /// The grant types a registered client may ask for.
    static let supportedGrantTypes = ["authorization_code", "refresh_token", "client_credentials"]

    /// Reads and checks the metadata in `body`, a JSON object.
    ///
    /// - Parameters:
    ///   - body: the request body, a JSON object of client metadata (RFC 7591 section 2).
    ///   - defaultMethod: the method when the body names none: `client_secret_basic` for a registration (RFC 7591
    ///     section 2), the registered one for an update (a client's method does not change).
    ///   - allowsClientCredentials: whether `client_credentials` may be registered (the SMART mode's `system/`
    ///     scopes); only with `private_key_jwt` even then.
    /// - Throws: ``RequestRefusal`` 400 `invalid_client_metadata` or `invalid_redirect_uri`.
    init(
        json body: Data,
        defaultMethod: TokenEndpointAuthMethod,
        allowsClientCredentials: Bool
    ) throws(RequestRefusal) {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw Self.invalid("the body must be a JSON object of client metadata (RFC 7591 section 2)")
        }
        func value(_ field: String) -> Any? {
            guard let value = object[field], !(value is NSNull) else { return nil }
            return value
        }
        func string(_ field: String) throws(RequestRefusal) -> String? {
            guard let value = value(field) else { return nil }
            guard let text = value as? String else { throw Self.invalid("\(field) must be a string") }
            return text
        }
        func strings(_ field: String) throws(RequestRefusal) -> [String]? {
            guard let value = value(field) else { return nil }
            guard let list = value as? [String] else { throw Self.invalid("\(field) must be an array of strings") }
            return list
        }

        if value("jwks_uri") != nil {
            throw Self.invalid("jwks_uri is not taken: send jwks inline; this server fetches nothing")
        }
        var method = defaultMethod
        if let methodName = try string("token_endpoint_auth_method") {
            guard let named = TokenEndpointAuthMethod(rawValue: methodName) else {
                let known = TokenEndpointAuthMethod.allCases.map(\.rawValue).joined(separator: ", ")
                throw Self.invalid("token_endpoint_auth_method \(methodName) is not one of \(known)")
            }
            method = named
        }

        let grantTypes = Self.unique(try strings("grant_types") ?? ["authorization_code"])
        guard !grantTypes.isEmpty else { throw Self.invalid("grant_types is empty") }
        for grantType in grantTypes where !Self.supportedGrantTypes.contains(grantType) {
            throw Self.invalid(
                "grant_type \(grantType) is not supported: \(Self.supportedGrantTypes.joined(separator: ", "))"
            )
        }
        let codeFlow = grantTypes.contains("authorization_code")
        if grantTypes.contains("client_credentials") {
            guard allowsClientCredentials else {
                throw Self.invalid("client_credentials is offered in the SMART mode only (system/ scopes)")
            }
            guard method == .privateKeyJWT else {
                throw Self.invalid("client_credentials is for private_key_jwt clients only")
            }
        }

        let responseTypes = Self.unique(try strings("response_types") ?? (codeFlow ? ["code"] : []))
        for responseType in responseTypes where responseType != "code" {
            throw Self.invalid("response_type \(responseType) is not supported: code only")
        }
        // RFC 7591 section 2.1: authorization_code goes with code, and code with authorization_code.
        guard codeFlow == responseTypes.contains("code") else {
            throw Self.invalid("grant_type authorization_code and response_type code go together")
        }

        let redirectURIs = Self.unique(try strings("redirect_uris") ?? [])
        for uri in redirectURIs where !RedirectURI.isAcceptableForRegistration(uri) {
            throw RequestRefusal.oauth(
                "invalid_redirect_uri",
                "redirect URI \(uri) is not https, http on a loopback host (127.0.0.1, [::1], localhost), "
                    + "or a private-use scheme with a dot (com.example.app:/cb), or it has a fragment"
            )
        }
        if codeFlow, redirectURIs.isEmpty {
            throw RequestRefusal.oauth(
                "invalid_redirect_uri",
                "redirect_uris is required for the authorization_code grant"
            )
        }

        var jwks: String?
        var keys: [String: JWK] = [:]
        if let set = value("jwks") {
            guard set is [String: Any],
                let data = try? JSONSerialization.data(withJSONObject: set, options: .sortedKeys)
            else { throw Self.invalid("jwks must be a JWK Set, a JSON object {\"keys\":[...]}") }
            let text = String(decoding: data, as: UTF8.self)
            do {
                keys = try BackendServices.keys(ofJWKS: text)
            } catch {
                throw Self.invalid("jwks \(error.description)")
            }
            jwks = text
        }
        if method == .privateKeyJWT, jwks == nil {
            throw Self.invalid(
                "private_key_jwt needs jwks: a JWK Set of RSA (2048 bits or more) or P-256/P-384 public keys, each "
                    + "with a kid"
            )
        }

        tokenEndpointAuthMethod = method
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.responseTypes = responseTypes
        clientName = try string("client_name")
        scope = try string("scope")
        self.jwks = jwks
        self.keys = keys
        clientId = try string("client_id")
        clientSecret = try string("client_secret")
    }

    private static func invalid(_ description: String) -> RequestRefusal {
        .oauth("invalid_client_metadata", description)
    }

    /// `values` in their order, each once.
    private static func unique(_ values: [String]) -> [String] {
        var seen: Set<String> = []
        return values.filter { seen.insert($0).inserted }
    }
}
