import Foundation
import VaultCrypto

/// The OpenID Connect provider: who may log in, and the tokens it issues.
struct IdentityProvider: Sendable {
    let configuration: KeyServiceMockConfiguration
    let signer: TokenSigner
    let sessions: SessionStore
    let address: ServerAddress
    /// EHR launches, session contexts and opaque access tokens; used only when `configuration.smart` is set.
    let smartStore: SMARTStore
    /// The SMART mode's backend clients and their assertions; none outside the SMART mode.
    let backendServices: BackendServices
    /// How many token requests each `grant_type` had.
    let tokenRequests: TokenRequestCounts
    /// The clients registered at run time (RFC 7591); empty unless ``KeyServiceMockConfiguration/dynamicRegistration``.
    let registry: ClientRegistry
    /// The DPoP checks and bindings of ``KeyServiceMockConfiguration/dpop``; nil when it is off.
    let dpop: DPoPVerifier?
    /// The `acr` and `amr` id tokens carry, and the last one issued.
    let authentication: MockAuthentication
    /// The device codes of ``KeyServiceMockConfiguration/deviceFlow``.
    let deviceGrants = DeviceGrantStore()

    /// How long an authorization code may wait for its exchange.
    static let codeLifetime: TimeInterval = 60

    var issuer: String { address.issuer }

    var smart: SMARTMode? { configuration.smart }

    /// Whether the authorization endpoint requires PKCE with S256: always, but in a SMART mode without S256.
    var requiresS256: Bool { smart?.offersS256 ?? true }

    /// The scope a grant gets for `requested`: the SMART mode's ``SMARTMode/grantedScope`` when set.
    func grantedScope(requested: String) -> String {
        smart?.grantedScope ?? requested
    }

    /// The configured public client `clientId`, or a registered client of the code flow with its redirect URIs.
    func client(_ clientId: String) -> MockClient? {
        if let configured = configuredClient(clientId) {
            return configured
        }
        guard let registered = registration(clientId), registered.allows(grantType: "authorization_code") else {
            return nil
        }
        return MockClient(clientId: clientId, redirectURIs: registered.client.redirectURIs)
    }

    /// The configured public client `clientId`.
    func configuredClient(_ clientId: String) -> MockClient? {
        configuration.clients.first { $0.clientId == clientId }
    }

    /// Whether `clientId` is a configured public client or, in the SMART mode, a backend client: the ones that
    /// introspect and revoke tokens by `client_id` alone.
    func isKnownClient(_ clientId: String) -> Bool {
        configuredClient(clientId) != nil || backendServices.isClient(clientId)
    }

    /// The client authentication methods the token, revocation and introspection endpoints take.
    var tokenEndpointAuthMethods: [String] {
        if configuration.dynamicRegistration {
            return ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
        }
        return smart?.backendClients.isEmpty == false ? ["none", "private_key_jwt"] : ["none"]
    }

    /// The absolute URL of `relative`, a path below the issuer, as discovery documents state it.
    func endpoint(_ relative: String, layout: Layout) -> String {
        address.baseURL + layout.path(relative)
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
    ///
    /// In the SMART mode the access token is opaque, and `includesContext` adds the session's launch context.
    /// `audience` (an RFC 8707 resource) is the access token's `aud` instead of the client, and `accessScope` (a
    /// narrower scope asked for at a refresh) its scope; the session keeps its own.
    func tokenResponse(
        for session: Session,
        nonce: String?,
        includesContext: Bool = true,
        audience: String? = nil,
        accessScope: String? = nil
    ) -> TokenResponse {
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
        let launch = smart == nil ? nil : smartStore.context(forSession: session.id)
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
            (id.acr, id.amr) = authentication.claims
            switch authentication.foreignClaim {
            case .issuer: id.iss = issuer + "-other"
            case .subject: id.sub = "someone-else"
            case .audience: (id.aud, id.azp) = ("another-client", "another-client")
            case nil: break
            }
            if let launch, scopes(of: session.scope).contains("fhirUser") {
                id.fhirUser = fhirUser(launch)
            }
            let signed = signer.sign(id)
            authentication.issued(signed)
            idToken = signed
        }
        let accessToken: String
        if let launch {
            accessToken = smartStore.issue(
                OpaqueAccessToken(
                    clientId: session.clientId,
                    subject: session.subject,
                    sessionId: session.id,
                    scope: session.scope,
                    patient: launch.patient,
                    expiresAt: now.addingTimeInterval(configuration.accessTokenLifetime)
                ),
                at: now
            )
        } else {
            var access = claims(
                "Bearer",
                lifetime: configuration.accessTokenLifetime,
                tokenId: SessionStore.newTokenId()
            )
            if let audience { access.aud = audience }
            if let accessScope { access.scope = accessScope }
            accessToken = signer.sign(access)
        }
        var response = TokenResponse(
            accessToken: accessToken,
            tokenType: "Bearer",
            expiresIn: Int(configuration.accessTokenLifetime),
            refreshToken: signer.sign(refresh),
            refreshExpiresIn: Int(configuration.refreshTokenLifetime),
            idToken: idToken,
            scope: accessScope ?? session.scope,
            sessionState: session.id
        )
        if let launch {
            response.mockSite = Self.mockSite
            if includesContext {
                addContext(launch, to: &response)
            }
        }
        return response
    }

    /// The answer to a backend client's `client_credentials` grant: a new opaque access token for `scope`,
    /// with no session, patient or refresh token.
    func clientCredentialsResponse(clientId: String, scope: String) -> ClientCredentialsTokenResponse {
        let now = configuration.now()
        let accessToken = smartStore.issue(
            OpaqueAccessToken(
                clientId: clientId,
                subject: clientId,
                sessionId: nil,
                scope: scope,
                patient: nil,
                expiresAt: now.addingTimeInterval(configuration.accessTokenLifetime)
            ),
            at: now
        )
        return ClientCredentialsTokenResponse(
            accessToken: accessToken,
            tokenType: "Bearer",
            expiresIn: Int(configuration.accessTokenLifetime),
            scope: scope,
            mockSite: Self.mockSite
        )
    }

    /// A field no specification defines, in every token answer of the SMART mode.
    private static let mockSite: JSONValue = ["name": "KeyServiceMock", "unit": "ward-7"]

    /// The SMART launch context fields of a token response (SMART App Launch 2.2, "launch context").
    private func addContext(_ launch: LaunchContext, to response: inout TokenResponse) {
        response.patient = launch.patient
        response.encounter = launch.encounter
        response.needPatientBanner = true
        response.smartStyleURL = address.baseURL + Layout.smartStyle
        var fhirContext: [JSONValue] = []
        if let encounter = launch.encounter {
            fhirContext.append(["reference": .string("Encounter/\(encounter)")])
        }
        fhirContext.append(["canonical": "http://example.org/fhir/Questionnaire/intake|1.0", "role": "launch"])
        response.fhirContext = fhirContext
        response.intent = launch.isEHRLaunch ? "reconcile-medications" : nil
        response.tenant = "mock-tenant"
    }

    /// The id token's `fhirUser`: the clinician of an EHR launch, the patient of a standalone one.
    private func fhirUser(_ launch: LaunchContext) -> String {
        launch.isEHRLaunch ? "Practitioner/dr-1" : "Patient/\(launch.patient ?? smart?.defaultPatient ?? "p1")"
    }

    /// The opaque access token `value` names, if it is known, not expired, and its session (if it has one)
    /// has not ended.
    func activeAccessToken(_ value: String) -> OpaqueAccessToken? {
        guard let token = smartStore.accessToken(value, at: configuration.now()) else { return nil }
        if let sessionId = token.sessionId {
            guard let session = sessions.session(sessionId), !session.revoked else { return nil }
        }
        return token
    }

    func scopes(of scope: String) -> Set<Substring> {
        Set(scope.split(separator: " "))
    }

    /// The discovery document (OpenID Connect Discovery 1.0 section 3).
    var discoveryDocument: DiscoveryDocument {
        let issuer = self.issuer
        let url = discoveredURL
        var document = DiscoveryDocument(
            issuer: issuer,
            authorizationEndpoint: url(Layout.authorization),
            tokenEndpoint: url(Layout.token),
            jwksURI: url(Layout.certs),
            userinfoEndpoint: url(Layout.userinfo),
            revocationEndpoint: configuration.offersRevocation ? url(Layout.revocation) : nil,
            endSessionEndpoint: url(Layout.endSession),
            responseTypesSupported: ["code"],
            responseModesSupported: ["query"],
            grantTypesSupported: ["authorization_code", "refresh_token", "password", TokenExchangeGrant.grantType],
            subjectTypesSupported: ["public"],
            idTokenSigningAlgValuesSupported: ["EdDSA"],
            codeChallengeMethodsSupported: requiresS256 ? ["S256"] : ["plain"],
            tokenEndpointAuthMethodsSupported: tokenEndpointAuthMethods,
            tokenEndpointAuthSigningAlgValuesSupported: configuration.dynamicRegistration
                ? backendServices.rules.accepted : nil,
            revocationEndpointAuthMethodsSupported: configuration.offersRevocation ? tokenEndpointAuthMethods : nil,
            registrationEndpoint: configuration.dynamicRegistration ? url(Layout.registration) : nil,
            scopesSupported: ["openid", "profile", "offline_access"],
            claimsSupported: [
                "iss", "sub", "aud", "exp", "iat", "jti", "scope", "login_provider", "nonce", "sid", "auth_time",
                "acr", "amr", "preferred_username",
            ],
            authorizationResponseIssParameterSupported: true
        )
        if dpop != nil { document.dpopSigningAlgValuesSupported = ["ES256"] }
        if configuration.deviceFlow != nil {
            document.deviceAuthorizationEndpoint = url(Layout.deviceAuthorization)
            document.grantTypesSupported.append(DeviceCodeGrant.grantType)
        }
        return document
    }

    /// The absolute URL of `relative`, a path below the issuer, exactly as discovery states it (what a DPoP proof's
    /// `htu` must equal).
    func discoveredURL(_ relative: String) -> String {
        issuer + "/" + relative
    }
}
