import Foundation
import JWTKit
import VaultCrypto

/// How the client proves who it is at the issuer's token and revocation endpoints (RFC 6749 section 2.3,
/// OpenID Connect Core 1.0 section 9).
///
/// ``none`` (a public client: only `client_id` is sent) is the default and the right choice for a command-line
/// tool or a native app (RFC 8252 section 8.5). A confidential client has a secret, sent as HTTP Basic
/// (`client_secret_basic`) or in the form (`client_secret_post`), or a private key that signs a short-lived
/// assertion (`private_key_jwt`, RFC 7523). Unless a method is given, a secret goes the way the endpoint's
/// `*_auth_methods_supported` in the discovery document allows (Basic first; Basic when it says nothing).
///
/// A secret or private key is a secret: `description` never shows it. Keep it out of plain config files (the
/// CLI reads it from a file only its owner can read).
public struct ClientAuthentication: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The methods, by their registered names.
    public struct Method: Sendable, Hashable, CustomStringConvertible {
        /// The registered name (`client_secret_basic`, ...).
        public let name: String

        /// No client authentication: `client_id` in the form.
        public static let none = Method(name: "none")
        /// The secret in an HTTP Basic `Authorization` header.
        public static let clientSecretBasic = Method(name: "client_secret_basic")
        /// The secret as `client_secret` in the form.
        public static let clientSecretPost = Method(name: "client_secret_post")
        /// A JWT signed with the client's private key as `client_assertion` (RFC 7523).
        public static let privateKeyJWT = Method(name: "private_key_jwt")

        /// The registered name, as in ``name``.
        public var description: String { name }
    }

    enum Credential: Sendable {
        case none
        case secret(String, Method?)
        case privateKey(ClientAssertionKey)
    }

    let credential: Credential

    /// A public client (the default).
    public static let none = ClientAuthentication(credential: .none)

    /// A confidential client's secret; `method` is ``Method/clientSecretBasic`` or ``Method/clientSecretPost``,
    /// or nil to go by the discovery document.
    /// - Throws: ``VaultError`` (a configuration error) for an empty secret or another method.
    public static func clientSecret(_ secret: String, method: Method? = nil) throws(VaultError) -> ClientAuthentication
    {
        guard !secret.isEmpty else { throw .invalidConfiguration("the client secret is empty") }
        if let method, method != .clientSecretBasic, method != .clientSecretPost {
            throw .invalidConfiguration(
                "a client secret is sent by client_secret_basic or client_secret_post, not \(method)"
            )
        }
        return ClientAuthentication(credential: .secret(secret, method))
    }

    /// A confidential client with a private key in PEM (`private_key_jwt`, RFC 7523).
    ///
    /// - Parameters:
    ///   - pem: an RSA key of 2048 bits or more, or a P-256 or P-384 key.
    ///   - keyId: the `kid` the server knows the key's public half by, sent in every assertion's header (SMART's
    ///     asymmetric client authentication requires one); nil sends none.
    ///   - algorithm: RS384 or RS256 for an RSA key, ES256 for P-256, ES384 for P-384; nil (the default) chooses per
    ///     server from its `token_endpoint_auth_signing_alg_values_supported`, RS384 before RS256 (SMART's rule), and
    ///     RS256, ES256 or ES384 by the key when it lists none.
    ///   - audience: what the assertions name as `aud`: the token endpoint (the default, RFC 7523 and SMART), at the
    ///     token, introspection and revocation endpoints alike, or the issuer for a server that wants that.
    /// - Returns: a client authentication that signs its assertions with the key.
    /// - Throws: ``VaultError`` (a configuration error) when the PEM is none of these, cannot sign `algorithm`, or
    ///   `keyId` is empty.
    public static func privateKeyJWT(
        pem: String,
        keyId: String? = nil,
        algorithm: String? = nil,
        audience: ClientAssertionAudience = .tokenEndpoint
    ) throws(VaultError) -> ClientAuthentication {
        ClientAuthentication(
            credential: .privateKey(
                try ClientAssertionKey(pem: pem, keyId: keyId, algorithm: algorithm, audience: audience)
            )
        )
    }

    /// The `kid` a private key client's assertions carry; nil for other clients and for a key without one.
    public var keyId: String? {
        guard case .privateKey(let key) = credential else { return nil }
        return key.keyId
    }

    /// What a private key client's assertions name as `aud`; nil for other clients.
    public var assertionAudience: ClientAssertionAudience? {
        guard case .privateKey(let key) = credential else { return nil }
        return key.audience
    }

    /// A new private key in PEM for ``privateKeyJWT(pem:keyId:algorithm:audience:)``: RSA of 2048 bits (`rsa`), else P-384.
    /// A secret: keep it in a file only its owner can read.
    public static func generatePrivateKey(rsa: Bool = true) -> String {
        ClientAssertionKey.generate(rsa: rsa)
    }

    /// The public half of a private key client's key as a JWK Set (`{"keys":[...]}`), for the server's registration
    /// of the client; nil for other clients.
    public var publicJWKS: JSONValue? {
        guard case .privateKey(let key) = credential else { return nil }
        return ["keys": [.object(key.publicJWK())]]
    }

    /// The method in use, or nil when a secret's method is left to the discovery document.
    public var method: Method? {
        switch credential {
        case .none: Method.none
        case .secret(_, let method): method
        case .privateKey: Method.privateKeyJWT
        }
    }

    /// `ClientAuthentication(client_secret_basic)`: the method, never the secret or the key.
    public var description: String {
        "ClientAuthentication(\(method?.name ?? "client secret, method from discovery"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the method only, so `dump` and debuggers show no secret or key.
    public var customMirror: Mirror {
        Mirror(self, children: ["method": method?.name ?? "from discovery"], displayStyle: .struct)
    }

    /// The method used at an endpoint whose discovery lists `supported` (nil when it lists nothing).
    func method(supported: [String]?) throws(VaultError) -> Method {
        switch credential {
        case .none: return .none
        case .privateKey: return .privateKeyJWT
        case .secret(_, let configured?): return configured
        case .secret(_, nil):
            // OpenID Connect Discovery: client_secret_basic when the document lists nothing.
            let listed = supported ?? [Method.clientSecretBasic.name]
            if listed.contains(Method.clientSecretBasic.name) { return .clientSecretBasic }
            if listed.contains(Method.clientSecretPost.name) { return .clientSecretPost }
            throw .invalidConfiguration(
                "the issuer takes neither client_secret_basic nor client_secret_post there (it lists "
                    + "\(listed.map { VaultError.printable($0) }.joined(separator: ", ")))"
            )
        }
    }

    /// A form-encoded POST of `fields` to `endpoint` carrying the client's credentials: the one way the token,
    /// introspection and revocation endpoints are called. A private key's assertion names `audiences`' choice (nil:
    /// `endpoint` is the token endpoint, and no algorithms are listed).
    func formRequest(
        to endpoint: URL,
        fields: [String: String],
        clientId: String,
        supported: [String]?,
        audiences: AssertionAudiences? = nil,
        now: Date,
        timeout: TimeInterval
    ) async throws(VaultError) -> HTTPRequest {
        var all = fields
        var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        try await authenticate(
            clientId: clientId,
            supported: supported,
            audiences: audiences
                ?? AssertionAudiences(tokenEndpoint: endpoint, issuer: endpoint.absoluteString, signingAlgorithms: nil),
            now: now,
            fields: &all,
            headers: &headers
        )
        return HTTPRequest(
            method: "POST",
            url: endpoint,
            headers: headers,
            body: Data(FormEncoding.encode(all).utf8),
            timeout: timeout
        )
    }

    /// Adds the client's credentials for a request to `endpoint`: `client_id` (and `client_secret`, or the
    /// assertion) to `fields`, or an `Authorization` header.
    private func authenticate(
        clientId: String,
        supported: [String]?,
        audiences: AssertionAudiences,
        now: Date,
        fields: inout [String: String],
        headers: inout [String: String]
    ) async throws(VaultError) {
        switch (credential, try method(supported: supported)) {
        case (.secret(let secret, _), .clientSecretBasic):
            // RFC 6749 section 2.3.1: both parts form-encoded before they are joined and base64-encoded.
            let pair = FormEncoding.escape(clientId) + ":" + FormEncoding.escape(secret)
            headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        case (.secret(let secret, _), _):
            fields["client_id"] = clientId
            fields["client_secret"] = secret
        case (.privateKey(let key), _):
            fields["client_id"] = clientId
            fields["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            fields["client_assertion"] = try await key.assertion(
                clientId: clientId,
                audience: audiences.audience(key.audience),
                algorithm: try key.algorithm(offered: audiences.signingAlgorithms),
                now: now
            )
        case (.none, _):
            fields["client_id"] = clientId
        }
    }
}
