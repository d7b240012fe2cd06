import Foundation
import Hummingbird
import KeyServiceCore

extension IdentityProvider {
    /// The registered client `clientId`, when dynamic registration is on and there is one.
    func registration(_ clientId: String) -> ClientRegistration? {
        configuration.dynamicRegistration ? registry.registration(clientId) : nil
    }

    /// Authenticates a request of the registered client `registration` by its registered method, and nothing else:
    /// `none` takes `client_id` alone; `client_secret_basic` an HTTP Basic secret, `client_secret_post` a
    /// `client_secret` field (each compared in constant time with the issued one); `private_key_jwt` a client
    /// assertion a key of the registered JWK Set verifies, with `aud` one of `audiences`.
    /// - Throws: ``RequestRefusal`` 401 `invalid_client`, whose description names what is wrong or missing (never
    ///   the value sent).
    func authenticate(
        _ registration: ClientRegistration,
        _ credentials: ClientCredentials,
        audiences: [String],
        now: Date
    ) async throws(RequestRefusal) {
        let clientId = registration.client.clientId
        let method = registration.method.rawValue
        if let field = credentials.clientIdField, field != clientId {
            throw .clientAuthenticationFailed("client_id differs from the client the credentials name")
        }
        guard credentials.methodCount <= 1 else {
            throw .clientAuthenticationFailed(
                "the request uses more than one client authentication method (RFC 6749 section 2.3): use \(method)"
            )
        }
        switch registration.method {
        case .none:
            guard !credentials.presentsCredential else {
                throw .clientAuthenticationFailed(
                    "client \(clientId) is public (token_endpoint_auth_method none): send client_id only"
                )
            }
        case .clientSecretBasic:
            // No `WWW-Authenticate: Basic` on these 401s, which RFC 6749 section 5.2 asks for: swift-corelibs-foundation's
            // URLSession never completes a request answered with a Basic challenge its delegate does not handle.
            guard let basic = credentials.basic else {
                throw .clientAuthenticationFailed(
                    "client \(clientId) authenticates with client_secret_basic: send its id and secret in HTTP Basic"
                )
            }
            guard registry.isSecret(basic.secret, of: registration) else {
                throw .clientAuthenticationFailed("the client secret is wrong")
            }
        case .clientSecretPost:
            guard let secret = credentials.secretField, credentials.clientIdField != nil else {
                throw .clientAuthenticationFailed(
                    "client \(clientId) authenticates with client_secret_post: send client_id and client_secret "
                        + "in the form"
                )
            }
            guard registry.isSecret(secret, of: registration) else {
                throw .clientAuthenticationFailed("the client secret is wrong")
            }
        case .privateKeyJWT:
            guard credentials.assertionType == BackendServices.assertionType, let assertion = credentials.assertion
            else {
                throw .clientAuthenticationFailed(
                    "client \(clientId) authenticates with private_key_jwt: send client_assertion_type="
                        + "\(BackendServices.assertionType) and client_assertion"
                )
            }
            _ = try await backendServices.verify(
                assertion: assertion,
                clientIdField: credentials.clientIdField,
                audiences: audiences,
                now: now,
                unknownClient: "client \(clientId)",
                keys: { $0 == clientId ? registration.keys : nil }
            )
        }
    }
}
