import Foundation
import Hummingbird
import KeyServiceCore
import Logging
import VaultCrypto

/// The OpenID Connect endpoints under the issuer, at Keycloak's paths.
struct OpenIDRoutes: Sendable {
    let provider: IdentityProvider

    private var now: Date { provider.configuration.now() }

    func add(to router: Router<MockRequestContext>, layout: Layout) {
        router.get(RouterPath(layout.path(Layout.discovery))) { _, _ in
            Response.json(provider.discoveryDocument)
        }
        router.get(RouterPath(layout.path(Layout.certs))) { _, _ in
            Response.json(provider.signer.jwks)
        }
        router.get(RouterPath(layout.path(Layout.authorization))) { request, context in
            try authorize(request, logger: context.logger)
        }
        router.post(RouterPath(layout.path(Layout.token))) { request, context in
            var request = request
            let credentials = try ClientCredentials(
                authorization: request.headers[.authorization],
                fields: try await request.formFields()
            )
            return try await token(credentials, proof: request.headers[.dpop], layout: layout, logger: context.logger)
        }
        if let mode = provider.configuration.deviceFlow {
            let grant = DeviceCodeGrant(provider: provider, mode: mode)
            router.post(RouterPath(layout.path(Layout.deviceAuthorization))) { request, context in
                var request = request
                return try grant.authorize(try await request.formFields(), logger: context.logger)
            }
            router.get(RouterPath(layout.path(Layout.deviceVerification))) { request, context in
                try grant.verify(try request.queryFields(), logger: context.logger)
            }
        }
        router.post(RouterPath(layout.path(Layout.introspection))) { request, context in
            var request = request
            let credentials = try ClientCredentials(
                authorization: request.headers[.authorization],
                fields: try await request.formFields()
            )
            return try await introspect(credentials, layout: layout, logger: context.logger)
        }
        router.post(RouterPath(layout.path(Layout.revocation))) { request, context in
            var request = request
            let credentials = try ClientCredentials(
                authorization: request.headers[.authorization],
                fields: try await request.formFields()
            )
            return try await revoke(credentials, layout: layout, logger: context.logger)
        }
        router.get(RouterPath(layout.path(Layout.endSession))) { request, context in
            try logout(try request.queryFields(), logger: context.logger)
        }
        router.post(RouterPath(layout.path(Layout.endSession))) { request, context in
            var request = request
            return try logout(try await request.formFields(), logger: context.logger)
        }
        router.get(RouterPath(layout.path(Layout.userinfo))) { request, context in
            try await userinfo(request, logger: context.logger)
        }
        router.post(RouterPath(layout.path(Layout.userinfo))) { request, context in
            try await userinfo(request, logger: context.logger)
        }
    }

    // MARK: Authorization endpoint

    /// The code flow with PKCE S256 required; signs in `users[0]` without asking.
    ///
    /// A bad client or redirect URI is answered 400 here (redirecting would hand the answer to
    /// an unknown party); every other error goes back to the client on its redirect URI. In the SMART mode
    /// `aud` must name the FHIR base, a `launch` id selects its EHR launch's context, and without S256 on
    /// offer a `plain` challenge or none is taken.
    private func authorize(_ request: Request, logger: Logger) throws -> Response {
        let fields = try request.queryFields()
        guard let clientId = fields["client_id"], let client = provider.client(clientId) else {
            throw RequestRefusal.oauth("invalid_client", "unknown client_id")
        }
        guard let redirectURI = fields["redirect_uri"] else {
            throw RequestRefusal.invalidRequest("the parameter redirect_uri is missing")
        }
        guard RedirectURI.isRegistered(redirectURI, for: client) else {
            throw RequestRefusal.invalidRequest("redirect_uri is not registered for this client")
        }
        let state = fields["state"]
        func fail(_ error: String, _ description: String) -> Response {
            logger.debug(
                "authorization refused on the redirect URI",
                metadata: ["client_id": "\(clientId)", "error": "\(error)", "error_description": "\(description)"]
            )
            return .redirect(
                to: RedirectURI.appending(
                    [
                        ("error", error), ("error_description", description), ("state", state),
                        ("iss", provider.issuer),
                    ],
                    to: redirectURI
                )
            )
        }
        guard fields["response_type"] == "code" else {
            return fail("unsupported_response_type", "only response_type=code is supported")
        }
        if provider.smart != nil {
            let fhirBase = provider.address.fhirBase
            guard let aud = fields["aud"] else {
                return fail("invalid_request", "aud is missing: it must be the FHIR base URL \(fhirBase)")
            }
            guard (aud.hasSuffix("/") ? String(aud.dropLast()) : aud) == fhirBase else {
                return fail("invalid_request", "aud is not this server's FHIR base URL \(fhirBase)")
            }
        }
        let challenge = fields["code_challenge"]
        // RFC 7636 section 4.3: a challenge without a method is plain.
        let method = fields["code_challenge_method"] ?? "plain"
        if provider.requiresS256 {
            guard challenge != nil else {
                return fail("invalid_request", "PKCE is required: code_challenge is missing")
            }
            guard method == "S256" else {
                return fail("invalid_request", "PKCE is required with code_challenge_method=S256")
            }
        }
        if let challenge {
            switch method {
            case "S256":
                guard challenge.count == 43, challenge.allSatisfy(\.isBase64URLCharacter) else {
                    return fail("invalid_request", "code_challenge is not a base64url SHA-256 digest")
                }
            case "plain":
                guard Self.isWellFormedVerifier(challenge) else {
                    return fail("invalid_request", "a plain code_challenge must be 43 to 128 unreserved characters")
                }
            default:
                return fail("invalid_request", "code_challenge_method must be S256 or plain")
            }
        }
        guard let user = provider.configuration.users.first else {
            return fail("access_denied", "no user is configured")
        }
        var launch: LaunchContext?
        if let smart = provider.smart {
            if let launchId = fields["launch"] {
                // Consumed only here, after every other check: a refused request leaves the launch usable.
                guard let ehrLaunch = provider.smartStore.consumeLaunch(launchId) else {
                    return fail("invalid_request", "launch is not a launch id of this server, or was already used")
                }
                launch = ehrLaunch
            } else {
                let scopes = provider.scopes(of: fields["scope"] ?? "")
                launch = LaunchContext(
                    patient: scopes.contains("launch/patient") ? smart.defaultPatient : nil,
                    encounter: scopes.contains("launch/encounter") ? smart.defaultEncounter : nil,
                    isEHRLaunch: false
                )
            }
        }
        let now = self.now
        let code = provider.sessions.issue(
            AuthorizationCode(
                clientId: clientId,
                redirectURI: redirectURI,
                scope: fields["scope"] ?? "openid",
                nonce: fields["nonce"],
                codeChallenge: challenge,
                codeChallengeMethod: method,
                user: user,
                expiresAt: now.addingTimeInterval(IdentityProvider.codeLifetime),
                launch: launch
            ),
            at: now
        )
        logger.debug("authorization code issued", metadata: ["client_id": "\(clientId)", "sub": "\(user.subject)"])
        return .redirect(
            to: RedirectURI.appending([("code", code), ("state", state), ("iss", provider.issuer)], to: redirectURI)
        )
    }

    // MARK: Token endpoint

    private func token(
        _ credentials: ClientCredentials,
        proof: String?,
        layout: Layout,
        logger: Logger
    ) async throws -> Response {
        let fields = credentials.fields
        let grantType = try fields.required("grant_type")
        provider.tokenRequests.count(grantType)
        // DPoP (RFC 9449 section 5): a proof, when there is one (or the mode requires one), binds what is issued.
        var jkt: String?
        if let dpop = provider.dpop, proof != nil || dpop.mode.requiresProof {
            jkt = try await dpop.verify(
                proof,
                method: "POST",
                url: provider.discoveredURL(Layout.token),
                accessToken: nil,
                place: .tokenEndpoint,
                now: now
            )
        }
        if let named = credentials.clientId, let registration = provider.registration(named) {
            provider.registry.countTokenRequest(of: named)
            try await provider.authenticate(
                registration,
                credentials,
                audiences: [provider.endpoint(Layout.token, layout: layout)],
                now: now
            )
            return try await registeredClientGrant(
                grantType,
                registration: registration,
                fields,
                jkt: jkt,
                logger: logger
            )
        }
        // A backend client authenticates by its assertion: client_id is optional for it.
        if grantType == "client_credentials", provider.smart != nil, provider.backendServices.isEnabled {
            return try await clientCredentials(fields, layout: layout, logger: logger)
        }
        try refuseUnknownCredentials(credentials)
        let clientId = try fields.required("client_id")
        guard provider.configuredClient(clientId) != nil else {
            throw RequestRefusal.oauth("invalid_client", "unknown client_id")
        }
        switch grantType {
        case "authorization_code":
            return try exchangeCode(fields, clientId: clientId, jkt: jkt, logger: logger)
        case "refresh_token":
            return try refresh(fields, clientId: clientId, jkt: jkt, logger: logger)
        case TokenExchangeGrant.grantType:
            return .json(try TokenExchangeGrant(provider: provider).answer(fields, clientId: clientId, logger: logger))
        case DeviceCodeGrant.grantType:
            guard let mode = provider.configuration.deviceFlow else {
                throw RequestRefusal.oauth("unsupported_grant_type", "the device grant is not offered")
            }
            let session = try DeviceCodeGrant(provider: provider, mode: mode).poll(fields, clientId: clientId)
            if let jkt { provider.dpop?.bind(sessionId: session.id, to: jkt) }
            return issued(session, grantType: grantType, nonce: nil, logger: logger)
        case "password":
            let username = try fields.required("username")
            let password = try fields.required("password")
            guard let user = provider.user(username: username, password: password) else {
                throw RequestRefusal.invalidGrant("invalid user credentials")
            }
            let session = try provider.sessions.startSession(
                user: user,
                clientId: clientId,
                scope: provider.grantedScope(requested: fields["scope"] ?? "openid"),
                at: now
            )
            // No launch, so no context: in the SMART mode only the opaque token and the unknown field.
            return issued(session, grantType: grantType, nonce: nil, includesContext: false, logger: logger)
        default:
            throw RequestRefusal.oauth("unsupported_grant_type", "grant_type \(grantType) is not supported")
        }
    }

    /// A grant of a registered client, already authenticated: only the grant types it registered
    /// (``ClientRegistration/allows(grantType:)``).
    private func registeredClientGrant(
        _ grantType: String,
        registration: ClientRegistration,
        _ fields: FormFields,
        jkt: String?,
        logger: Logger
    ) async throws -> Response {
        let clientId = registration.client.clientId
        guard registration.allows(grantType: grantType) else {
            throw RequestRefusal.oauth(
                "unauthorized_client",
                "client \(clientId) did not register grant_type \(grantType)"
            )
        }
        switch grantType {
        case "authorization_code":
            return try exchangeCode(fields, clientId: clientId, jkt: jkt, logger: logger)
        case "refresh_token":
            return try refresh(fields, clientId: clientId, jkt: jkt, logger: logger)
        default:
            return try systemToken(fields, clientId: clientId, grantedScope: nil, logger: logger)
        }
    }

    /// With dynamic registration, refuses a request that presents a credential (HTTP Basic, a secret or an
    /// assertion) for a client that is neither registered nor configured: a deleted registration's, say. Without it
    /// nothing changes: such a request goes on to the `client_id` checks as before.
    private func refuseUnknownCredentials(_ credentials: ClientCredentials) throws(RequestRefusal) {
        guard provider.configuration.dynamicRegistration, credentials.presentsCredential else { return }
        if let named = credentials.clientId, provider.configuredClient(named) != nil { return }
        throw .clientAuthenticationFailed("the credentials name no client of this server")
    }

    private func exchangeCode(_ fields: FormFields, clientId: String, jkt: String?, logger: Logger) throws -> Response {
        let value = try fields.required("code")
        let redirectURI = try fields.required("redirect_uri")
        let sessionId = SessionStore.newSessionId()
        let code: AuthorizationCode
        switch provider.sessions.claim(value, forSession: sessionId, at: now) {
        case .invalid:
            throw RequestRefusal.invalidGrant("the code is unknown or expired")
        case .reused(let earlierSession):
            try provider.sessions.revoke(sessionId: earlierSession)
            logger.debug(
                "authorization code reuse detected: its session is revoked",
                metadata: ["sid": "\(earlierSession)"]
            )
            throw RequestRefusal.invalidGrant("the code was already used: the tokens issued for it are revoked")
        case .fresh(let claimed):
            code = claimed
        }
        guard code.clientId == clientId else {
            throw RequestRefusal.invalidGrant("the code was issued to another client")
        }
        guard code.redirectURI == redirectURI else {
            throw RequestRefusal.invalidGrant("redirect_uri differs from the authorization request's")
        }
        // Without a challenge (only where S256 is not on offer) there is nothing to verify.
        if let challenge = code.codeChallenge {
            guard let verifier = fields["code_verifier"] else {
                throw RequestRefusal.invalidGrant("PKCE code_verifier is missing")
            }
            let computed =
                code.codeChallengeMethod == "S256" ? Base64URL.encode(SHA256.hash(Data(verifier.utf8))) : verifier
            guard Self.isWellFormedVerifier(verifier), ConstantTime.equal(Data(computed.utf8), Data(challenge.utf8))
            else {
                throw RequestRefusal.invalidGrant("PKCE verification failed")
            }
        }
        let session = try provider.sessions.startSession(
            id: sessionId,
            user: code.user,
            clientId: clientId,
            scope: provider.grantedScope(requested: code.scope),
            at: now,
            authenticatedAt: now.addingTimeInterval(-provider.configuration.authenticationAge)
        )
        if let launch = code.launch {
            provider.smartStore.setContext(launch, forSession: session.id)
        }
        if let jkt { provider.dpop?.bind(sessionId: session.id, to: jkt) }
        return issued(session, grantType: "authorization_code", nonce: code.nonce, logger: logger)
    }

    /// SMART Backend Services: a `client_credentials` grant for `system/` scopes, the client authenticated by a
    /// `private_key_jwt` assertion (RFC 7523 section 2.2); answered with an opaque access token alone.
    private func clientCredentials(_ fields: FormFields, layout: Layout, logger: Logger) async throws -> Response {
        guard fields["client_assertion_type"] == BackendServices.assertionType else {
            throw RequestRefusal.clientAuthenticationFailed(
                "client_assertion_type must be \(BackendServices.assertionType): a backend client authenticates "
                    + "with a private_key_jwt assertion"
            )
        }
        guard let assertion = fields["client_assertion"] else {
            throw RequestRefusal.clientAuthenticationFailed("client_assertion is missing")
        }
        let client = try await provider.backendServices.authenticate(
            assertion: assertion,
            clientIdField: fields["client_id"],
            tokenEndpoint: provider.endpoint(Layout.token, layout: layout),
            now: now
        )
        return try systemToken(fields, clientId: client.clientId, grantedScope: client.grantedScope, logger: logger)
    }

    /// The `client_credentials` answer for an authenticated client: an opaque access token for the `system/`
    /// scopes asked for (or `grantedScope`), no refresh token.
    private func systemToken(
        _ fields: FormFields,
        clientId: String,
        grantedScope: String?,
        logger: Logger
    ) throws -> Response {
        guard let requested = fields["scope"], !provider.scopes(of: requested).isEmpty else {
            throw RequestRefusal.oauth("invalid_scope", "scope is missing: ask for system/ scopes, such as system/*.rs")
        }
        for scope in requested.split(separator: " ") where SMARTScope(scope)?.context != "system" {
            throw RequestRefusal.oauth(
                "invalid_scope",
                "a backend client is granted system/ scopes only (system/Patient.rs, system/*.read, ...): \(scope) is not one"
            )
        }
        logger.debug("token issued, grant client_credentials", metadata: ["client_id": "\(clientId)"])
        return .json(provider.clientCredentialsResponse(clientId: clientId, scope: grantedScope ?? requested))
    }

    /// RFC 7636 section 4.1: a verifier (or plain challenge) is 43 to 128 unreserved characters.
    private static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.count)
            && verifier.allSatisfy { $0.isBase64URLCharacter || $0 == "." || $0 == "~" }
    }

    private func refresh(_ fields: FormFields, clientId: String, jkt: String?, logger: Logger) throws -> Response {
        let presented = try fields.required("refresh_token")
        guard let claims = provider.signer.verify(presented), claims.typ == "Refresh", claims.iss == provider.issuer
        else {
            throw RequestRefusal.invalidGrant("not a refresh token of this issuer")
        }
        guard claims.aud == clientId else {
            throw RequestRefusal.invalidGrant("the refresh token was issued to another client")
        }
        guard Double(claims.exp) > now.timeIntervalSince1970 else {
            throw RequestRefusal.invalidGrant("the refresh token has expired")
        }
        if let requested = fields["scope"],
            !provider.scopes(of: requested).isSubset(of: provider.scopes(of: claims.scope))
        {
            throw RequestRefusal.oauth("invalid_scope", "a refresh cannot widen the scope")
        }
        // RFC 9449 section 5: a bound refresh token is used only with a proof of its key.
        if let bound = provider.dpop?.binding(of: claims.sid), bound != jkt {
            throw RequestRefusal.invalidGrant("the refresh token is bound to a DPoP key, and no proof of it came")
        }
        // RFC 8707: the access token is for the resource named (checked before anything rotates).
        let audience = try ResourceIndicator.audience(fields["resource"])
        switch try provider.sessions.rotate(sessionId: claims.sid, presentedTokenId: claims.jti) {
        case .unknownSession:
            throw RequestRefusal.invalidGrant("unknown session")
        case .ended:
            throw RequestRefusal.invalidGrant("the session has ended")
        case .reused:
            logger.debug("refresh token reuse detected: its family is revoked", metadata: ["sid": "\(claims.sid)"])
            throw RequestRefusal.invalidGrant("the refresh token was already used: its whole family is revoked")
        case .rotated(let session):
            return issued(
                session,
                grantType: "refresh_token",
                nonce: nil,
                includesContext: provider.smart?.refreshIncludesContext ?? false,
                audience: audience,
                accessScope: fields["scope"],
                logger: logger
            )
        }
    }

    /// The token response for `session`, logged without any token.
    private func issued(
        _ session: Session,
        grantType: String,
        nonce: String?,
        includesContext: Bool = true,
        audience: String? = nil,
        accessScope: String? = nil,
        logger: Logger
    ) -> Response {
        logger.debug(
            "token issued, grant \(grantType)",
            metadata: ["client_id": "\(session.clientId)", "sub": "\(session.subject)", "sid": "\(session.id)"]
        )
        var response = provider.tokenResponse(
            for: session,
            nonce: nonce,
            includesContext: includesContext,
            audience: audience,
            accessScope: accessScope
        )
        if provider.dpop?.binding(of: session.id) != nil { response.tokenType = "DPoP" }
        return .json(response)
    }

    // MARK: Revocation (RFC 7009)

    /// The client a revocation or introspection request comes from: a registered client, authenticated by its
    /// registered method (an assertion's `aud` may be the token endpoint or `endpoint`), or a configured public or
    /// backend client named by `client_id` alone.
    private func requestingClient(
        _ credentials: ClientCredentials,
        endpoint: String,
        layout: Layout
    ) async throws -> String {
        if let named = credentials.clientId, let registration = provider.registration(named) {
            try await provider.authenticate(
                registration,
                credentials,
                // SMART's rule (ClientAssertionRules.smart): the token endpoint is the only audience, everywhere.
                audiences: provider.backendServices.rules.audienceIsTokenEndpointOnly
                    ? [provider.endpoint(Layout.token, layout: layout)]
                    : [provider.endpoint(Layout.token, layout: layout), provider.endpoint(endpoint, layout: layout)],
                now: now
            )
            return named
        }
        try refuseUnknownCredentials(credentials)
        let clientId = try credentials.fields.required("client_id")
        guard provider.isKnownClient(clientId) else {
            throw RequestRefusal.oauth("invalid_client", "unknown client_id")
        }
        return clientId
    }

    private func revoke(_ credentials: ClientCredentials, layout: Layout, logger: Logger) async throws -> Response {
        let fields = credentials.fields
        let token = try fields.required("token")
        let clientId = try await requestingClient(credentials, endpoint: Layout.revocation, layout: layout)
        if provider.smart != nil, let opaque = provider.smartStore.accessToken(token, at: now) {
            guard opaque.clientId == clientId else {
                throw RequestRefusal.invalidRequest("the token was issued to another client")
            }
            provider.smartStore.revokeAccessToken(token)
            logger.debug(
                "access token revoked",
                metadata: ["client_id": "\(opaque.clientId)", "sid": "\(opaque.sessionId ?? "-")"]
            )
            return Response(status: .ok)
        }
        // RFC 7009 section 2.2: an invalid or unknown token is answered 200 all the same.
        guard let claims = provider.signer.verify(token), claims.iss == provider.issuer else {
            logger.debug("revocation of a token this issuer did not sign: nothing to do")
            return Response(status: .ok)
        }
        guard claims.aud == clientId else {
            throw RequestRefusal.invalidRequest("the token was issued to another client")
        }
        switch claims.typ {
        case "Refresh":
            try provider.sessions.revoke(sessionId: claims.sid)
            logger.debug("refresh token revoked: its family is revoked", metadata: ["sid": "\(claims.sid)"])
        case "Bearer":
            provider.sessions.revokeAccessToken(claims.jti)
            logger.debug("access token revoked", metadata: ["sid": "\(claims.sid)"])
        default:
            logger.debug("revocation of an id token: nothing to do", metadata: ["sid": "\(claims.sid)"])
        }
        return Response(status: .ok)
    }

    // MARK: Introspection (RFC 7662)

    /// Whether an access token is active, and what it grants; only the SMART mode's opaque tokens are
    /// introspected (a JWT access token speaks for itself), anything else is `{"active":false}`.
    private func introspect(_ credentials: ClientCredentials, layout: Layout, logger: Logger) async throws -> Response {
        let fields = credentials.fields
        let token = try fields.required("token")
        _ = try await requestingClient(credentials, endpoint: Layout.introspection, layout: layout)
        guard provider.smart != nil, let opaque = provider.activeAccessToken(token) else {
            logger.debug("introspection: inactive token")
            return .json(["active": false] as JSONValue)
        }
        logger.debug(
            "introspection: active token",
            metadata: ["client_id": "\(opaque.clientId)", "sid": "\(opaque.sessionId ?? "-")"]
        )
        var answer: [String: JSONValue] = [
            "active": true, "scope": .string(opaque.scope), "client_id": .string(opaque.clientId),
            "sub": .string(opaque.subject), "token_type": "Bearer",
            "exp": .number(Int(opaque.expiresAt.timeIntervalSince1970)),
        ]
        if let patient = opaque.patient {
            answer["patient"] = .string(patient)
        }
        return .json(JSONValue.object(answer))
    }

    // MARK: End session

    /// RP-initiated logout: ends the session named by `id_token_hint` (or Keycloak's `refresh_token`),
    /// then redirects to `post_logout_redirect_uri` when it is registered, or answers 200.
    private func logout(_ fields: FormFields, logger: Logger) throws -> Response {
        let hint = (fields["id_token_hint"] ?? fields["refresh_token"]).flatMap { provider.signer.verify($0) }
        let clientId = fields["client_id"] ?? hint?.aud
        if let hint, let clientId, hint.aud != clientId {
            throw RequestRefusal.invalidRequest("the token hint was issued to another client")
        }
        var redirect: String?
        if let target = fields["post_logout_redirect_uri"] {
            guard let clientId, let client = provider.client(clientId), RedirectURI.isRegistered(target, for: client)
            else {
                throw RequestRefusal.invalidRequest("post_logout_redirect_uri is not registered for this client")
            }
            redirect = RedirectURI.appending([("state", fields["state"])], to: target)
        }
        if let hint, hint.iss == provider.issuer {
            try provider.sessions.revoke(sessionId: hint.sid)
            logger.debug("session ended", metadata: ["sid": "\(hint.sid)"])
        } else {
            logger.debug("logout without a token hint of this issuer: no session ended")
        }
        if let redirect {
            return .redirect(to: redirect)
        }
        return .text("You are logged out.\n")
    }

    // MARK: Userinfo

    private func userinfo(_ request: Request, logger: Logger) async throws -> Response {
        let unauthorized = Response(
            status: .unauthorized,
            headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#]
        )
        if provider.smart != nil, let authorization = request.headers[.authorization],
            authorization.hasPrefix("Bearer "),
            let opaque = provider.activeAccessToken(String(authorization.dropFirst("Bearer ".count))),
            let sessionId = opaque.sessionId, let session = provider.sessions.session(sessionId)
        {
            logger.debug("userinfo answered", metadata: ["sub": "\(opaque.subject)"])
            return .json([
                "sub": opaque.subject, "preferred_username": session.username, "login_provider": session.loginProvider,
            ])
        }
        if let dpop = provider.dpop, let authorization = request.headers[.authorization],
            authorization.hasPrefix("DPoP ")
        {
            return try await dpopUserinfo(request, token: String(authorization.dropFirst("DPoP ".count)), dpop: dpop)
        }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            let claims = provider.signer.verify(String(authorization.dropFirst("Bearer ".count))),
            claims.typ == "Bearer", claims.iss == provider.issuer,
            // RFC 9449 section 7.2: a token bound to a key is no bearer token.
            provider.dpop?.binding(of: claims.sid) == nil,
            Double(claims.exp) > now.timeIntervalSince1970,
            !provider.sessions.isAccessTokenRevoked(claims.jti),
            let session = provider.sessions.session(claims.sid), !session.revoked
        else {
            logger.debug("userinfo refused: no valid access token")
            return unauthorized
        }
        logger.debug("userinfo answered", metadata: ["sub": "\(claims.sub)"])
        return .json([
            "sub": claims.sub, "preferred_username": session.username, "login_provider": claims.loginProvider,
        ])
    }

    /// Userinfo for a DPoP-bound access token (RFC 9449 section 7): `Authorization: DPoP <token>` and a proof of the
    /// token's key for this request, with `ath`.
    private func dpopUserinfo(_ request: Request, token: String, dpop: DPoPVerifier) async throws -> Response {
        guard let claims = provider.signer.verify(token), claims.typ == "Bearer", claims.iss == provider.issuer,
            Double(claims.exp) > now.timeIntervalSince1970, !provider.sessions.isAccessTokenRevoked(claims.jti),
            let session = provider.sessions.session(claims.sid), !session.revoked
        else { throw DPoPVerifier.refusal("invalid_token", "no valid access token", place: .resource) }
        guard let bound = dpop.binding(of: claims.sid) else {
            throw DPoPVerifier.refusal("invalid_token", "the access token is not bound to a DPoP key", place: .resource)
        }
        let presented = try await dpop.verify(
            request.headers[.dpop],
            method: request.method.rawValue,
            url: provider.discoveredURL(Layout.userinfo),
            accessToken: token,
            place: .resource,
            now: now
        )
        guard presented == bound else {
            throw DPoPVerifier.refusal("invalid_dpop_proof", "the proof's key is not the token's", place: .resource)
        }
        return .json([
            "sub": claims.sub, "preferred_username": session.username, "login_provider": claims.loginProvider,
        ])
    }
}
