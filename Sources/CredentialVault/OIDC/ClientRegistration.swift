public import Foundation
import VaultCrypto

/// A client this library registered at the issuer (RFC 7591 dynamic client registration): the client id the issuer
/// gave, how the client authenticates, and the secrets that go with it — a client secret, or the private keys of a
/// `private_key_jwt` client, and the registration access token of RFC 7592.
///
/// It is sealed with the refresh token in the user's envelope (never written anywhere else), so a later login in a
/// new process uses the same client. `description`, `dump` and debuggers show no secret and no key.
///
/// Key rotation (``Auth/rotateClientKey()``) adds a new key beside the signing one. Both are listed in
/// ``publicJWKS`` until the server has the new key: at once when the registration can be updated (RFC 7592), else
/// when the server first accepts an assertion signed with the new key. Then the old key is dropped.
public struct ClientRegistration: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// A private key of the client, in PEM, with its `kid` and the algorithm its assertions carry.
    struct Key: Codable, Sendable, Hashable {
        let pem: String
        let kid: String
        let alg: String
    }

    /// The client id the issuer gave.
    public let clientId: String
    /// How the client authenticates at the token, revocation and introspection endpoints.
    public let method: ClientAuthentication.Method
    /// Where the registration is read, updated and deleted (RFC 7592), when the issuer manages registrations.
    public let registrationClientURI: URL?
    /// The client metadata as the issuer registered it (RFC 7591 section 2), without secrets: sent back whole when
    /// the registration is updated.
    let metadata: [String: JSONValue]
    /// A `client_secret_*` client's secret. A secret.
    let clientSecret: String?
    /// The bearer token for ``registrationClientURI``. A secret.
    let registrationAccessToken: String?
    /// A `private_key_jwt` client's keys: the first signs; a second is a new key waiting until the server has it.
    let keys: [Key]

    init(
        clientId: String,
        method: ClientAuthentication.Method,
        registrationClientURI: URL?,
        metadata: [String: JSONValue],
        clientSecret: String?,
        registrationAccessToken: String?,
        keys: [Key]
    ) {
        self.clientId = clientId
        self.method = method
        self.registrationClientURI = registrationClientURI
        self.metadata = metadata
        self.clientSecret = clientSecret
        self.registrationAccessToken = registrationAccessToken
        self.keys = keys
    }

    /// The `kid`s of the client's keys, the signing key first, then a new key the server may not have yet.
    public var keyIds: [String] { keys.map(\.kid) }

    /// Whether a new key waits for the server (``Auth/rotateClientKey()`` without RFC 7592, until the server accepts
    /// an assertion signed with it).
    public var hasPendingKey: Bool { keys.count > 1 }

    /// The public halves of the client's keys as a JWK Set (`{"keys":[...]}`): what the server must list for this
    /// client. Nil for a client without keys.
    public var publicJWKS: JSONValue? { Self.publicJWKS(of: keys) }

    /// The public halves of `keys` as a JWK Set; nil for no keys.
    static func publicJWKS(of keys: [Key]) -> JSONValue? {
        guard !keys.isEmpty else { return nil }
        let jwks = keys.compactMap { key in
            (try? ClientAssertionKey(pem: key.pem, keyId: key.kid, algorithm: key.alg)).map {
                JSONValue.object($0.publicJWK())
            }
        }
        return ["keys": .array(jwks)]
    }

    /// How the client authenticates: with the pending key when `pending` and one waits, else the signing key.
    func authentication(pending: Bool = false) throws(VaultError) -> ClientAuthentication {
        switch method {
        case .none:
            return .none
        case .privateKeyJWT:
            guard let key = pending && hasPendingKey ? keys.last : keys.first else {
                throw .unexpectedRecord("the sealed client registration holds no private key")
            }
            return try .privateKeyJWT(pem: key.pem, keyId: key.kid, algorithm: key.alg)
        default:
            guard let clientSecret else {
                throw .unexpectedRecord("the sealed client registration holds no client secret")
            }
            return try .clientSecret(clientSecret, method: method)
        }
    }

    /// The same registration with `keys` (a rotation), and the issuer's answer to an update when there was one.
    func replacing(keys: [Key], updatedBy answer: ClientRegistration? = nil) -> ClientRegistration {
        ClientRegistration(
            clientId: clientId,
            method: method,
            registrationClientURI: answer?.registrationClientURI ?? registrationClientURI,
            metadata: answer?.metadata ?? metadata,
            clientSecret: answer?.clientSecret ?? clientSecret,
            registrationAccessToken: answer?.registrationAccessToken ?? registrationAccessToken,
            keys: keys
        )
    }

    /// The same registration once the server has accepted the pending key: it alone signs from now on.
    func promotingPendingKey() -> ClientRegistration {
        guard hasPendingKey, let last = keys.last else { return self }
        return replacing(keys: [last])
    }

    /// A new private key of the algorithm `alg` (ES384 or RS384), with a random `kid`.
    static func newKey(alg: String) -> Key {
        Key(
            pem: ClientAssertionKey.generate(rsa: alg.hasPrefix("RS")),
            kid: Base64URL.encode(SecureRandom.bytes(count: 12)),
            alg: alg
        )
    }

    // MARK: Sealing

    /// The record sealed in the envelope.
    struct Sealed: Codable {
        let client_id: String
        let token_endpoint_auth_method: String
        let registration_client_uri: String?
        let metadata: [String: JSONValue]
        let client_secret: String?
        let registration_access_token: String?
        let keys: [Key]
    }

    var sealed: Sealed {
        Sealed(
            client_id: clientId,
            token_endpoint_auth_method: method.name,
            registration_client_uri: registrationClientURI?.absoluteString,
            metadata: metadata,
            client_secret: clientSecret,
            registration_access_token: registrationAccessToken,
            keys: keys
        )
    }

    init?(sealed: Sealed) {
        guard !sealed.client_id.isEmpty else { return nil }
        self.init(
            clientId: sealed.client_id,
            method: ClientAuthentication.Method(name: sealed.token_endpoint_auth_method),
            registrationClientURI: sealed.registration_client_uri.flatMap(URL.init(string:)),
            metadata: sealed.metadata,
            clientSecret: sealed.client_secret,
            registrationAccessToken: sealed.registration_access_token,
            keys: sealed.keys
        )
    }

    // MARK: Description

    /// `ClientRegistration(clientId: ..., method: ..., keys: [...])`: ids and the method, never a secret or key.
    public var description: String {
        "ClientRegistration(clientId: \(VaultError.printable(clientId, limit: 100)), method: \(method), keys: "
            + "\(keyIds), manageable: \(registrationClientURI != nil && registrationAccessToken != nil))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without secrets or keys.
    public var customMirror: Mirror {
        Mirror(self, children: ["clientId": clientId, "method": method.name, "keyIds": keyIds], displayStyle: .struct)
    }
}
