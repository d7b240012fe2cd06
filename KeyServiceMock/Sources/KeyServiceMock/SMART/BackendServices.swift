import Foundation
import JWTKit
import KeyServiceCore
import NIOConcurrencyHelpers

/// SMART Backend Services (SMART App Launch 2.2, "backend services"): who the backend clients are, and the
/// check of the `private_key_jwt` assertion (RFC 7523 section 3, "client-confidential-asymmetric") that
/// authenticates their `client_credentials` grant.
///
/// The signature is verified by jwt-kit; the key is chosen here, by the header's `kid` in the JWK Set of the
/// client the assertion's `iss` names, so that every refusal can say which rule the assertion broke.
struct BackendServices: Sendable {
    /// `client_assertion_type` for a JWT assertion (RFC 7523 section 2.2).
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The algorithms an assertion may be signed with: SMART's two SHALLs, RS384 and ES384, then their
    /// SHA-256 forms. `none` and the HMAC algorithms never: a backend client proves itself with a private key.
    static let algorithms = ["RS384", "ES384", "RS256", "ES256"]
    /// How far a client's clock may be from this server's, either way.
    static let clockSkew: TimeInterval = 60
    /// How far ahead an assertion's `exp` may be (SMART: "no more than five minutes in the future").
    static let maximumLifetime: TimeInterval = 300

    /// A backend client with its keys by `kid`.
    private struct Registration: Sendable {
        let client: RegisteredBackendClient
        let keys: [String: JWK]
    }

    private let registrations: [String: Registration]
    private let usedAssertions = UsedAssertionIds()
    /// The algorithms taken, and whether `aud` must be the token endpoint everywhere.
    let rules: ClientAssertionRules

    /// Reads every client's JWK Set.
    /// - Throws: ``KeyServiceMockError`` naming the client and what is wrong: an empty or repeated client id,
    ///   a set that is not a JWK Set, has no keys, a key without `kid` or with a private part, a key that is
    ///   neither RSA (2048 bits or more) nor EC on P-256 or P-384, or an `alg` that does not fit the key.
    init(
        _ clients: [RegisteredBackendClient],
        rules: ClientAssertionRules = ClientAssertionRules()
    ) throws(KeyServiceMockError) {
        self.rules = rules
        var registrations: [String: Registration] = [:]
        for client in clients {
            guard !client.clientId.isEmpty else {
                throw KeyServiceMockError("a SMART backend client has an empty client id")
            }
            guard registrations[client.clientId] == nil else {
                throw KeyServiceMockError("the SMART backend client \(client.clientId) is configured twice")
            }
            let keys = try Self.keys(of: client)
            registrations[client.clientId] = Registration(client: client, keys: keys)
        }
        self.registrations = registrations
    }

    private static func keys(of client: RegisteredBackendClient) throws(KeyServiceMockError) -> [String: JWK] {
        do {
            return try keys(ofJWKS: client.jwks)
        } catch {
            throw KeyServiceMockError("the JWK Set of the SMART backend client \(client.clientId) \(error.description)")
        }
    }

    /// The keys of a client's JWK Set (JSON text), by `kid`: the rules for every key a client assertion may be
    /// verified with, whether the set was configured or registered (RFC 7591 `jwks`).
    ///
    /// - Throws: ``KeyServiceMockError`` whose description completes "the JWK Set ...": not a JWK Set, no keys, a
    ///   key without `kid` or with a private part, a key that is neither RSA (2048 bits or more) nor EC on P-256 or
    ///   P-384, or an `alg` that does not fit the key.
    static func keys(ofJWKS jwks: String) throws(KeyServiceMockError) -> [String: JWK] {
        func invalid(_ reason: String) -> KeyServiceMockError {
            KeyServiceMockError(reason)
        }
        let set: JWKS
        do {
            set = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
        } catch {
            throw invalid("is not a JWK Set ({\"keys\":[...]}) of RSA and EC keys: \(error)")
        }
        guard !set.keys.isEmpty else { throw invalid("has no keys") }
        // jwt-kit reads d, p and q only: look at the text for every private or symmetric member (RFC 7518 6.2.2,
        // 6.3.2, 6.4.1), so that no secret a client sent by mistake is kept.
        if let object = try? JSONSerialization.jsonObject(with: Data(jwks.utf8)) as? [String: Any],
            let members = object["keys"] as? [[String: Any]],
            let leaked = members.first(where: { !privateMembers.isDisjoint(with: $0.keys) })
        {
            let kid = (leaked["kid"] as? String).map { " (kid \($0))" } ?? ""
            throw invalid("holds a private or symmetric key\(kid): publish the public key only")
        }
        var keys: [String: JWK] = [:]
        for key in set.keys {
            guard let kid = key.keyIdentifier?.string, !kid.isEmpty else {
                throw invalid("has a key without kid: an assertion names its key by kid")
            }
            guard keys[kid] == nil else { throw invalid("has two keys with kid \(kid)") }
            // A published private key is a leaked one: refuse the set rather than use it.
            guard key.privateExponent == nil, key.prime1 == nil, key.prime2 == nil else {
                throw invalid("holds a private key (kid \(kid)): publish the public key only")
            }
            do {
                switch key.keyType {
                case .rsa:
                    _ = try Insecure.RSA.PublicKey(modulus: key.modulus ?? "", exponent: key.exponent ?? "")
                case .ecdsa where key.curve == .ecdsa(.p256):
                    _ = try ES256PublicKey(parameters: (key.x ?? "", key.y ?? ""))
                case .ecdsa where key.curve == .ecdsa(.p384):
                    _ = try ES384PublicKey(parameters: (key.x ?? "", key.y ?? ""))
                default:
                    throw invalid("has a key (kid \(kid)) that is neither RSA nor EC on P-256 or P-384")
                }
            } catch let error as KeyServiceMockError {
                throw error
            } catch {
                throw invalid(
                    "has a key (kid \(kid)) that does not load (an RSA key needs 2048 bits or more): \(error)"
                )
            }
            if let alg = key.algorithm?.rawValue {
                guard algorithms.contains(alg), fits(alg, key) else {
                    throw invalid("pins kid \(kid) to alg \(alg), which is not one of \(algorithms) for this key")
                }
            }
            keys[kid] = key
        }
        return keys
    }

    /// The JWK members that only a private (RSA `d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`; EC `d`) or symmetric
    /// (`k`) key has.
    private static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Whether `alg` is one an assertion signed with `key` may name: RS* for RSA, ES256 for P-256, ES384 for P-384.
    private static func fits(_ alg: String, _ key: JWK) -> Bool {
        switch alg {
        case "RS256", "RS384": key.keyType == .rsa
        case "ES256": key.keyType == .ecdsa && key.curve == .ecdsa(.p256)
        case "ES384": key.keyType == .ecdsa && key.curve == .ecdsa(.p384)
        default: false
        }
    }

    /// Whether any backend client is configured: only then is the `client_credentials` grant offered.
    var isEnabled: Bool { !registrations.isEmpty }

    /// Whether `clientId` is a backend client's id.
    func isClient(_ clientId: String) -> Bool {
        registrations[clientId] != nil
    }

    /// Authenticates a backend client by its `client_assertion`, and returns that client.
    ///
    /// The checks are ``verify(assertion:clientIdField:audiences:now:unknownClient:keys:)``'s, with `aud` the
    /// token endpoint.
    /// - Throws: ``RequestRefusal`` 401 `invalid_client`, whose description names the rule broken.
    func authenticate(
        assertion: String,
        clientIdField: String?,
        tokenEndpoint: String,
        now: Date
    ) async throws(RequestRefusal) -> RegisteredBackendClient {
        let clientId = try await verify(
            assertion: assertion,
            clientIdField: clientIdField,
            audiences: [tokenEndpoint],
            now: now,
            unknownClient: "a backend client of this server",
            keys: { registrations[$0]?.keys }
        )
        guard let registration = registrations[clientId] else {
            throw .clientAuthenticationFailed("iss \(clientId) is not a backend client of this server")
        }
        return registration.client
    }

    /// Verifies a `private_key_jwt` client assertion (RFC 7523 section 3) with the keys `keys` gives for its
    /// `iss`, and returns that client id.
    ///
    /// The checks, in order: a JWS with an accepted `alg`; `iss` a client `keys` knows, equal to `sub` and to the
    /// `client_id` field when there is one; `kid` one of that client's keys, whose `alg` (when pinned) and type
    /// fit the header's; the signature; `aud` one of `audiences` (the endpoint called, as discovery states it);
    /// `exp` present, not past and at most five minutes ahead; `iat` and `nbf` not in the future; `jti` present
    /// and not seen from this client before (it is remembered until the assertion could no longer be taken).
    /// Clock differences of ``clockSkew`` are allowed.
    /// - Parameters:
    ///   - assertion: the `client_assertion` form field, a compact JWS.
    ///   - clientIdField: the request's `client_id` field; nil when it sent none.
    ///   - audiences: the `aud` values taken: the endpoint called, as discovery states it.
    ///   - now: the time `exp`, `iat` and `nbf` are checked against.
    ///   - unknownClient: what `iss` is not when `keys` knows no such client, for the refusal.
    ///   - keys: a client id's keys by `kid`; nil for a client it does not know.
    /// - Returns: the client id, the assertion's `iss`.
    /// - Throws: ``RequestRefusal`` 401 `invalid_client`, whose description names the rule broken.
    func verify(
        assertion: String,
        clientIdField: String?,
        audiences: [String],
        now: Date,
        unknownClient: String,
        keys: (String) -> [String: JWK]?
    ) async throws(RequestRefusal) -> String {
        func refuse(_ reason: String) -> RequestRefusal {
            .clientAuthenticationFailed(reason)
        }
        // Read unverified only to find the client and its key; nothing is trusted before the signature holds.
        let header: JWTHeader
        let unverified: ClientAssertionClaims
        do {
            let parsed = try DefaultJWTParser().parse(Array(assertion.utf8), as: ClientAssertionClaims.self)
            header = parsed.header
            unverified = parsed.payload
        } catch {
            throw refuse("client_assertion is not a JWT (base64url header.payload.signature with JSON claims)")
        }
        let accepted = rules.accepted
        guard let alg = header.alg, accepted.contains(alg) else {
            let named = header.alg.map { "alg \($0)" } ?? "an assertion without alg"
            let why =
                header.alg == "none"
                ? "an unsigned assertion proves nothing"
                : Self.algorithms.contains(header.alg ?? "")
                    ? "this server does not take it" : "not a private-key signature"
            throw refuse(
                "\(named) is refused (\(why)): this server accepts \(accepted.joined(separator: " or "))"
            )
        }
        guard let clientId = unverified.iss, !clientId.isEmpty else {
            throw refuse("the assertion has no iss: iss and sub must both be the client id")
        }
        guard unverified.sub == clientId else {
            throw refuse("the assertion's sub must equal its iss, the client id")
        }
        if let clientIdField, clientIdField != clientId {
            throw refuse("client_id differs from the assertion's iss")
        }
        guard let clientKeys = keys(clientId) else {
            throw refuse("iss \(clientId) is not \(unknownClient)")
        }
        guard let kid = header.kid, !kid.isEmpty else {
            throw refuse(
                "the assertion's header has no kid: it must name the key of the client's JWK Set that signed it"
            )
        }
        guard var key = clientKeys[kid] else {
            throw refuse("kid \(kid) is not a key in the JWK Set of client \(clientId)")
        }
        if let pinned = key.algorithm?.rawValue, pinned != alg {
            throw refuse("the header's alg \(alg) contradicts the alg \(pinned) of key \(kid)")
        }
        guard Self.fits(alg, key) else {
            throw refuse("alg \(alg) does not fit key \(kid) (kty \(key.keyType.rawValue))")
        }
        key.algorithm = JWK.Algorithm(rawValue: alg)
        let claims: ClientAssertionClaims
        do {
            let collection = JWTKeyCollection()
            try await collection.add(jwk: key)
            claims = try await collection.verify(assertion, as: ClientAssertionClaims.self)
        } catch {
            throw refuse("the assertion's signature does not verify with key \(kid) of client \(clientId)")
        }
        guard let audience = claims.aud?.value, audience.contains(where: audiences.contains) else {
            throw refuse("aud must be \(audiences.joined(separator: " or "))")
        }
        guard let expiry = claims.exp else {
            throw refuse("the assertion has no exp")
        }
        guard expiry.addingTimeInterval(Self.clockSkew) > now else {
            throw refuse("the assertion has expired (exp is in the past)")
        }
        guard expiry <= now.addingTimeInterval(Self.maximumLifetime + Self.clockSkew) else {
            throw refuse("exp is more than five minutes ahead: an assertion may live 300 s at most")
        }
        let latestStart = now.addingTimeInterval(Self.clockSkew)
        if let issuedAt = claims.iat, issuedAt > latestStart {
            throw refuse("iat is in the future")
        }
        if let notBefore = claims.nbf, notBefore > latestStart {
            throw refuse("nbf is in the future: the assertion is not valid yet")
        }
        guard let jti = claims.jti, !jti.isEmpty else {
            throw refuse("the assertion has no jti: every assertion needs a unique one")
        }
        // Last, so that only an assertion that would otherwise be taken uses up its jti.
        guard
            usedAssertions.use(
                jti,
                of: clientId,
                until: expiry.addingTimeInterval(Self.clockSkew),
                now: now
            )
        else {
            throw refuse("the assertion's jti was used before: make a new assertion, with a new jti, for every request")
        }
        return clientId
    }
}

/// The claims of a client assertion; each one optional, so that a missing claim is refused by name.
private struct ClientAssertionClaims: JWTPayload {
    var iss: String?
    var sub: String?
    var aud: AudienceClaim?
    var exp: Date?
    var iat: Date?
    var nbf: Date?
    var jti: String?

    /// Nothing here: ``BackendServices/verify(assertion:clientIdField:audiences:now:unknownClient:keys:)`` checks each
    /// claim itself, to say which one failed.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The `jti`s of the assertions taken, per client, each until its assertion could no longer be valid.
private final class UsedAssertionIds: Sendable {
    private struct Key: Hashable {
        let clientId: String
        let jti: String
    }

    private let used = NIOLockedValueBox<[Key: Date]>([:])

    /// Records `jti` of `clientId` until `expiry`; `false` when it is already recorded, so it was used before.
    func use(_ jti: String, of clientId: String, until expiry: Date, now: Date) -> Bool {
        used.withLockedValue { used in
            used = used.filter { $0.value > now }
            let key = Key(clientId: clientId, jti: jti)
            guard used[key] == nil else { return false }
            used[key] = expiry
            return true
        }
    }
}
