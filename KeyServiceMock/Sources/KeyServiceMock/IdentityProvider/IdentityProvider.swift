import Foundation
import NIOConcurrencyHelpers
import VaultCrypto

/// The server's address, known once the listener is bound.
final class ServerAddress: Sendable {
    private let issuerValue = NIOLockedValueBox<String>("")

    /// `{baseURL}/auth/realms/{realm}`, without a trailing slash.
    var issuer: String {
        get { issuerValue.withLockedValue { $0 } }
        set { issuerValue.withLockedValue { $0 = newValue } }
    }
}

/// The OpenID Connect provider: who may log in, and the tokens it issues.
struct IdentityProvider: Sendable {
    let configuration: KeyServiceMockConfiguration
    let signer: TokenSigner
    let sessions: SessionStore
    let address: ServerAddress

    /// How long an authorization code may wait for its exchange.
    static let codeLifetime: TimeInterval = 60

    var issuer: String { address.issuer }

    func client(_ clientId: String) -> MockClient? {
        configuration.clients.first { $0.clientId == clientId }
    }

    func user(username: String, password: String) -> MockUser? {
        configuration.users.first { user in
            // Both compared every time, in constant time, so the answer time tells nothing.
            let nameMatches = ConstantTime.equal(Data(user.username.utf8), Data(username.utf8))
            let passwordMatches = ConstantTime.equal(Data(user.password.utf8), Data(password.utf8))
            return nameMatches && passwordMatches
        }
    }

    /// Access token, refresh token (the session's current one) and, for an `openid` scope, id token.
    func tokenResponse(for session: Session, nonce: String?) -> TokenResponse {
        let now = configuration.now()
        let issuedAt = Int(now.timeIntervalSince1970)
        func claims(_ type: String, lifetime: TimeInterval, tokenId: String) -> TokenClaims {
            TokenClaims(
                typ: type,
                iss: issuer,
                sub: session.subject,
                aud: session.clientId,
                azp: session.clientId,
                exp: issuedAt + Int(lifetime),
                iat: issuedAt,
                jti: tokenId,
                scope: session.scope,
                loginProvider: session.loginProvider,
                sid: session.id,
                preferredUsername: session.username
            )
        }
        let access = claims("Bearer", lifetime: configuration.accessTokenLifetime, tokenId: SessionStore.newTokenId())
        var refresh = claims(
            "Refresh",
            lifetime: configuration.refreshTokenLifetime,
            tokenId: session.currentRefreshTokenId
        )
        refresh.familyId = session.id
        var idToken: String?
        if scopes(of: session.scope).contains("openid") {
            var id = claims("ID", lifetime: configuration.idTokenLifetime, tokenId: SessionStore.newTokenId())
            id.nonce = nonce
            id.authTime = Int(session.authTime.timeIntervalSince1970)
            idToken = signer.sign(id)
        }
        return TokenResponse(
            accessToken: signer.sign(access),
            tokenType: "Bearer",
            expiresIn: Int(configuration.accessTokenLifetime),
            refreshToken: signer.sign(refresh),
            refreshExpiresIn: Int(configuration.refreshTokenLifetime),
            idToken: idToken,
            scope: session.scope,
            sessionState: session.id
        )
    }

    func scopes(of scope: String) -> Set<Substring> {
        Set(scope.split(separator: " "))
    }

    /// The discovery document (OpenID Connect Discovery 1.0 section 3).
    var discoveryDocument: DiscoveryDocument {
        let endpoints = issuer + "/protocol/openid-connect"
        return DiscoveryDocument(
            issuer: issuer,
            authorizationEndpoint: endpoints + "/auth",
            tokenEndpoint: endpoints + "/token",
            jwksURI: endpoints + "/certs",
            userinfoEndpoint: endpoints + "/userinfo",
            revocationEndpoint: endpoints + "/revoke",
            endSessionEndpoint: endpoints + "/logout",
            responseTypesSupported: ["code"],
            responseModesSupported: ["query"],
            grantTypesSupported: ["authorization_code", "refresh_token", "password"],
            subjectTypesSupported: ["public"],
            idTokenSigningAlgValuesSupported: ["EdDSA"],
            codeChallengeMethodsSupported: ["S256"],
            tokenEndpointAuthMethodsSupported: ["none"],
            revocationEndpointAuthMethodsSupported: ["none"],
            scopesSupported: ["openid", "profile", "offline_access"],
            claimsSupported: [
                "iss", "sub", "aud", "exp", "iat", "jti", "scope", "login_provider", "nonce", "sid", "auth_time",
                "preferred_username",
            ],
            authorizationResponseIssParameterSupported: true
        )
    }
}

/// The token endpoint's success body (RFC 6749 section 5.1, plus Keycloak's extra fields).
struct TokenResponse: Encodable {
    let accessToken: String
    let tokenType: String
    let expiresIn: Int
    let refreshToken: String
    let refreshExpiresIn: Int
    let idToken: String?
    let scope: String
    let sessionState: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case refreshExpiresIn = "refresh_expires_in"
        case idToken = "id_token"
        case scope
        case sessionState = "session_state"
    }
}

struct DiscoveryDocument: Encodable {
    let issuer: String
    let authorizationEndpoint: String
    let tokenEndpoint: String
    let jwksURI: String
    let userinfoEndpoint: String
    let revocationEndpoint: String
    let endSessionEndpoint: String
    let responseTypesSupported: [String]
    let responseModesSupported: [String]
    let grantTypesSupported: [String]
    let subjectTypesSupported: [String]
    let idTokenSigningAlgValuesSupported: [String]
    let codeChallengeMethodsSupported: [String]
    let tokenEndpointAuthMethodsSupported: [String]
    let revocationEndpointAuthMethodsSupported: [String]
    let scopesSupported: [String]
    let claimsSupported: [String]
    let authorizationResponseIssParameterSupported: Bool

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
    }
}
