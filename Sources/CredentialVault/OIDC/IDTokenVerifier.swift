import Foundation
import JWTKit
import VaultCrypto

/// Validates an id_token from the token endpoint as OpenID Connect Core 1.0 section 3.1.3.7 asks: the
/// signature under the issuer's key (jwt-kit does the cryptography), an algorithm from ``algorithms``, `iss`,
/// `aud` and `azp`, `exp` and `iat` with the leeway, and the login's `nonce` (when it sent one: a device login,
/// RFC 8628, has none to send, and takes the id_token straight from the token endpoint).
struct IDTokenVerifier: Sendable {
    /// The signature algorithms accepted; `none` and the HMAC algorithms (a public client has no shared
    /// secret to check them with) never are.
    static let algorithms: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
    ]

    /// The most clock skew tolerated on `exp`, `iat` and `nbf` (seconds), whatever leeway is configured.
    static let maximumClockSkew: TimeInterval = 300

    /// The issuer identifier exactly as its discovery document states it.
    let issuer: String
    let clientId: String
    let leeway: TimeInterval
    /// The `max_age` the login asked for (seconds): `auth_time` must then be there, and no older than this.
    var maxAge: Int? = nil

    /// The id_token's claims once everything checks out.
    /// - Throws: ``VaultError`` `.openIDConnectFailed` saying which check failed (never the token itself); a
    ///   network error when the key set cannot be fetched.
    func verify(_ idToken: String, nonce: String?, keys: ProviderKeys, now: Date) async throws(VaultError) -> JWT {
        let jwt: JWT
        do { jwt = try JWT(token: idToken) } catch { throw Self.refused("it does not decode (\(error.code))") }
        let algorithm = jwt.algorithm
        guard Self.algorithms.contains(algorithm) else {
            throw Self.refused(
                jwt.isUnsecured
                    ? "it is unsigned (alg none)"
                    : "it is signed with \(VaultError.printable(algorithm)), which this client does not accept"
            )
        }
        let key = try await keys.key(id: jwt.header["kid"]?.stringValue, algorithm: algorithm)
        if let declared = key.jwk.algorithm?.rawValue, declared != algorithm {
            throw Self.refused(
                "it says \(VaultError.printable(algorithm)) but the issuer's key is for \(VaultError.printable(declared))"
            )
        }
        try await Self.checkSignature(idToken, with: key)
        try checkClaims(of: jwt, nonce: nonce, now: now)
        return jwt
    }

    /// Any payload: the claims are read with the library's own strict decoder and checked in ``checkClaims``.
    private struct AnyClaims: JWTPayload {
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private static func checkSignature(_ idToken: String, with key: ProviderKeys.Key) async throws(VaultError) {
        var jwk = key.jwk
        jwk.keyIdentifier = JWKIdentifier(string: key.id ?? "issuer-key")
        do {
            let collection = JWTKeyCollection()
            try await collection.add(jwk: jwk, isDefault: true)
            _ = try await collection.verify(idToken, as: AnyClaims.self)
        } catch {
            throw refused("its signature does not verify under the issuer's key")
        }
    }

    private func checkClaims(of jwt: JWT, nonce: String?, now: Date) throws(VaultError) {
        guard jwt.issuer == issuer else {
            throw Self.refused("it was issued by \(VaultError.printable(jwt.issuer ?? "nobody")), not by \(issuer)")
        }
        guard jwt.audience.contains(clientId) else { throw Self.refused("it is meant for another client (aud)") }
        let authorizedParty: String? = jwt["azp"]
        if jwt.audience.count > 1 || authorizedParty != nil {
            guard authorizedParty == clientId else {
                throw Self.refused("it was issued to another client (azp)")
            }
        }
        guard let expiry = jwt.expireDate else { throw Self.refused("it has no expiry (exp)") }
        guard now < expiry.addingTimeInterval(leeway) else { throw Self.refused("it has expired") }
        guard let issuedAt = jwt.issuedAt else { throw Self.refused("it has no issue time (iat)") }
        guard issuedAt <= now.addingTimeInterval(leeway) else { throw Self.refused("it was issued in the future") }
        guard jwt.isNotYetValid(leeway: leeway, now: now) == false else { throw Self.refused("it is not valid yet") }
        if let nonce {
            guard let said: String = jwt["nonce"], ConstantTime.equal(Data(said.utf8), Data(nonce.utf8)) else {
                throw Self.refused("its nonce does not match this login")
            }
        }
        try checkAuthenticationTime(of: jwt, now: now)
    }

    /// With a `max_age`, OpenID Connect Core 1.0 section 3.1.3.7 item 13: `auth_time` must be there, and the
    /// authentication no older than `max_age` (with the leeway).
    /// - Throws: ``VaultError`` `.authenticationTooOld` when it is missing or too old.
    private func checkAuthenticationTime(of jwt: JWT, now: Date) throws(VaultError) {
        guard let maxAge else { return }
        guard let authenticated: Date = jwt["auth_time"] else {
            throw VaultError(
                .authenticationTooOld,
                "The login asked for max_age \(maxAge), but the issuer's id token does not say when the user "
                    + "authenticated (no auth_time); nothing was stored.",
                origin: .issuer
            )
        }
        let age = now.timeIntervalSince(authenticated)
        guard age <= TimeInterval(maxAge) + leeway else {
            throw VaultError(
                .authenticationTooOld,
                "The user authenticated at the issuer \(Int(age)) s ago, more than the \(maxAge) s the login asked for "
                    + "(max_age): the issuer did not ask the user to log in again. Nothing was stored; log in again.",
                origin: .issuer
            )
        }
    }

    private static func refused(_ why: String) -> VaultError {
        .openIDConnectFailed("the issuer's id token was refused: \(why); nothing was stored")
    }
}
