import Foundation
import VaultCrypto

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
            tokenId: session.refreshTokenId
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
        let issuer = self.issuer
        func url(_ relative: String) -> String { issuer + "/" + relative }
        return DiscoveryDocument(
            issuer: issuer,
            authorizationEndpoint: url(Layout.authorization),
            tokenEndpoint: url(Layout.token),
            jwksURI: url(Layout.certs),
            userinfoEndpoint: url(Layout.userinfo),
            revocationEndpoint: url(Layout.revocation),
            endSessionEndpoint: url(Layout.endSession),
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
