import Foundation
import Logging

extension Auth {
    /// The client this library registered at the issuer for the session's login (RFC 7591), as sealed with its
    /// refresh token; nil without a session or for a configured client id.
    public var clientRegistration: ClientRegistration? { session?.refreshToken.client }

    /// Gives the session's registered `private_key_jwt` client a new key, keeping the old one listed until the server
    /// has the new one.
    ///
    /// The new key is sealed beside the old one first. Where the registration can be updated (RFC 7592), the server
    /// is sent both keys; once it answers, the new key alone signs, and the server is sent the new key alone (if that
    /// last update fails, the old public key stays listed there; its private key is gone). Otherwise the new key
    /// waits: publish ``ClientRegistration/publicJWKS`` (both keys) at the server, and the first token request the
    /// server accepts signed with the new key drops the old one; until then the old key signs. A new key that is
    /// already waiting is used again rather than another made.
    /// - Returns: the registration as sealed now.
    /// - Throws: ``VaultError`` `.notLoggedIn`; `.invalidConfiguration` when the session's client was not registered
    ///   here with a private key; `.registrationFailed` or a network error from the update (the new key then waits,
    ///   sealed: call again, or publish the key set).
    @discardableResult
    public func rotateClientKey() async throws(VaultError) -> ClientRegistration {
        guard let registration = session?.refreshToken.client, registration.method == .privateKeyJWT,
            let signing = registration.keys.first
        else {
            throw .invalidConfiguration(
                "the session's client was not registered by this library with a private key: there is no key here to "
                    + "rotate (a configured key is rotated where it is configured)"
            )
        }
        let new = registration.hasPendingKey ? registration.keys[registration.keys.count - 1] : nil
        let waiting = registration.replacing(keys: [signing, new ?? ClientRegistration.newKey(alg: signing.alg)])
        var sealed = try await seal(waiting)
        guard sealed.registrationClientURI != nil, let newKey = sealed.keys.last else { return sealed }
        let withBoth = try await registrationEndpoint.update(sealed, keys: sealed.keys)
        // The server has the new key: it alone signs from now on.
        sealed = try await seal(withBoth.promotingPendingKey())
        do {
            sealed = try await seal(try await registrationEndpoint.update(sealed, keys: [newKey]))
        } catch {
            configuration.logger.debug("the old client key stays listed at the issuer; its update failed")
        }
        return sealed
    }

    /// Seals `registration` as the session's client (the stored login's, which another process may have rotated).
    private func seal(_ registration: ClientRegistration) async throws(VaultError) -> ClientRegistration {
        try await updateStoredLogin { $0.replacingClient(registration) }
        return registration
    }

    /// The issuer's registration endpoint and registration management (RFC 7591, RFC 7592).
    var registrationEndpoint: RegistrationEndpoint {
        RegistrationEndpoint(transport: transport, timeout: configuration.requestTimeout, logger: configuration.logger)
    }
}
