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
    struct Key: Sendable, Hashable {
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

    /// The registration as sealed in the envelope's record (``SealedRecord``): `client_id`,
    /// `token_endpoint_auth_method`, `metadata`, `keys` (each `pem`, `kid`, `alg`), and `registration_client_uri`,
    /// `client_secret` and `registration_access_token` when set. Secrets: never log it.
    var sealed: JSONValue {
        var members: [String: JSONValue] = [
            "client_id": .string(clientId),
            "token_endpoint_auth_method": .string(method.name),
            "metadata": .object(metadata),
            "keys": .array(keys.map { ["pem": .string($0.pem), "kid": .string($0.kid), "alg": .string($0.alg)] }),
        ]
        members["registration_client_uri"] = registrationClientURI.map { .string($0.absoluteString) }
        members["client_secret"] = clientSecret.map(JSONValue.string)
        members["registration_access_token"] = registrationAccessToken.map(JSONValue.string)
        return .object(members)
    }

    /// The registration ``sealed`` wrote (a member left out or null where it may be absent); nil when `sealed` is not
    /// one.
    init?(sealed json: JSONValue) {
        guard let sealed = json.objectValue, case .string(let clientId)? = sealed["client_id"], !clientId.isEmpty,
            case .string(let method)? = sealed["token_endpoint_auth_method"],
            case .object(let metadata)? = sealed["metadata"],
            case .array(let sealedKeys)? = sealed["keys"],
            case .some(let registrationClientURI) = UntrustedJSON.optionalString("registration_client_uri", in: sealed),
            case .some(let clientSecret) = UntrustedJSON.optionalString("client_secret", in: sealed),
            case .some(let registrationAccessToken) = UntrustedJSON.optionalString(
                "registration_access_token",
                in: sealed
            )
        else { return nil }
        var keys: [Key] = []
        for key in sealedKeys {
            guard let fields = key.objectValue, case .string(let pem)? = fields["pem"],
                case .string(let kid)? = fields["kid"], case .string(let alg)? = fields["alg"]
            else { return nil }
            keys.append(Key(pem: pem, kid: kid, alg: alg))
        }
        self.init(
            clientId: clientId,
            method: ClientAuthentication.Method(name: method),
            registrationClientURI: registrationClientURI.flatMap(URL.init(string:)),
            metadata: metadata,
            clientSecret: clientSecret,
            registrationAccessToken: registrationAccessToken,
            keys: keys
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
