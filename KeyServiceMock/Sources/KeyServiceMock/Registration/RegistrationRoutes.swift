import Foundation
import Hummingbird
import KeyServiceCore
import Logging

/// OAuth 2.0 Dynamic Client Registration (RFC 7591) at `{issuer}/clients-registrations/openid-connect`, and its
/// management protocol (RFC 7592) at each client's `registration_client_uri`, `{registration endpoint}/{client_id}`.
///
/// Registration is open (no initial access token): this is a test server on loopback. Reading, updating and
/// deleting a registration take its `registration_access_token` as a Bearer token.
struct RegistrationRoutes: Sendable {
    let provider: IdentityProvider

    func add(to router: Router<MockRequestContext>, layout: Layout) {
        let path = layout.path(Layout.registration)
        router.post(RouterPath(path)) { request, context in
            var request = request
            let body = try await request.collectLimitedBody()
            return try register(body, layout: layout, logger: context.logger)
        }
        router.get(RouterPath(path + "/:client_id")) { request, context in
            let (registration, token) = try managed(request, context: context)
            context.logger.debug("registration read", metadata: ["client_id": "\(registration.client.clientId)"])
            return Response.json(
                object: registration.answer(
                    clientSecret: nil,
                    registrationAccessToken: token,
                    registrationClientURI: clientURI(registration.client.clientId, layout: layout)
                )
            )
        }
        router.put(RouterPath(path + "/:client_id")) { request, context in
            let (registration, token) = try managed(request, context: context)
            var request = request
            let body = try await request.collectLimitedBody()
            return try update(registration, token: token, body: body, layout: layout, logger: context.logger)
        }
        router.delete(RouterPath(path + "/:client_id")) { request, context in
            let (registration, _) = try managed(request, context: context)
            try remove(registration.client.clientId, logger: context.logger)
            return Response(status: .noContent)
        }
    }

    private var now: Date { provider.configuration.now() }

    private func clientURI(_ clientId: String, layout: Layout) -> String {
        provider.endpoint(Layout.registration, layout: layout) + "/" + clientId
    }

    /// RFC 7591 section 3: registers the client the body describes and answers 201 with its id, its secret (for
    /// the `client_secret_*` methods), its registration access token and URI, and the metadata registered.
    private func register(_ body: Data, layout: Layout, logger: Logger) throws -> Response {
        let metadata = try ClientMetadata(
            json: body,
            defaultMethod: .clientSecretBasic,
            allowsClientCredentials: provider.smart != nil
        )
        let issued = try provider.registry.register(metadata, at: now) { clientId in
            provider.configuredClient(clientId) != nil || provider.backendServices.isClient(clientId)
        }
        let clientId = issued.registration.client.clientId
        logger.debug(
            "client registered",
            metadata: [
                "client_id": "\(clientId)", "token_endpoint_auth_method": "\(issued.registration.method.rawValue)",
                "grant_types": "\(issued.registration.client.grantTypes.joined(separator: " "))",
            ]
        )
        return .json(
            status: .created,
            object: issued.registration.answer(
                clientSecret: issued.clientSecret,
                registrationAccessToken: issued.registrationAccessToken,
                registrationClientURI: clientURI(clientId, layout: layout)
            )
        )
    }

    /// RFC 7592 section 2.2: replaces the metadata. The body must carry the client's `client_id` (and, when it
    /// carries `client_secret`, the issued one); an omitted `token_endpoint_auth_method` keeps the registered one,
    /// another one is refused (register a new client instead).
    private func update(
        _ registration: ClientRegistration,
        token: String,
        body: Data,
        layout: Layout,
        logger: Logger
    ) throws -> Response {
        let clientId = registration.client.clientId
        let metadata = try ClientMetadata(
            json: body,
            defaultMethod: registration.method,
            allowsClientCredentials: provider.smart != nil
        )
        guard metadata.clientId == clientId else {
            throw RequestRefusal.oauth(
                "invalid_client_metadata",
                "the body must carry client_id, the one of this registration (RFC 7592 section 2.2)"
            )
        }
        guard metadata.tokenEndpointAuthMethod == registration.method else {
            throw RequestRefusal.oauth(
                "invalid_client_metadata",
                "token_endpoint_auth_method cannot change from \(registration.method.rawValue): register a new client"
            )
        }
        if let secret = metadata.clientSecret, !provider.registry.isSecret(secret, of: registration) {
            throw RequestRefusal.oauth("invalid_client_metadata", "client_secret is not the one issued to this client")
        }
        guard let updated = provider.registry.update(clientId, with: metadata) else {
            throw Self.invalidToken
        }
        logger.debug(
            "registration updated",
            metadata: ["client_id": "\(clientId)", "kids": "\(updated.client.keyIds.joined(separator: " "))"]
        )
        return .json(
            object: updated.answer(
                clientSecret: metadata.clientSecret,
                registrationAccessToken: token,
                registrationClientURI: clientURI(clientId, layout: layout)
            )
        )
    }

    /// RFC 7592 section 2.3: forgets the client, ends its sessions (no refresh token of it works any more) and
    /// revokes its opaque access tokens.
    private func remove(_ clientId: String, logger: Logger) throws {
        guard provider.registry.remove(clientId) else { throw Self.invalidToken }
        let sessions = try provider.sessions.revokeSessions(ofClient: clientId)
        let tokens = provider.smartStore.revokeAccessTokens(ofClient: clientId)
        logger.debug(
            "registration deleted: its sessions and access tokens are revoked",
            metadata: ["client_id": "\(clientId)", "sessions": "\(sessions)", "access_tokens": "\(tokens)"]
        )
    }

    /// The registration the request's path names, and the registration access token it presented as a Bearer
    /// token (RFC 6750 section 2.1).
    /// - Throws: ``RequestRefusal`` 401 `invalid_token`, the same for an unknown client and a wrong or missing
    ///   token, so that the answer does not tell which client ids exist.
    private func managed(
        _ request: Request,
        context: MockRequestContext
    ) throws(RequestRefusal) -> (ClientRegistration, String) {
        guard provider.configuration.dynamicRegistration,
            let clientId = context.parameters.get("client_id"),
            let authorization = request.headers[.authorization],
            authorization.lowercased().hasPrefix("bearer ")
        else { throw Self.invalidToken }
        let token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, let registration = provider.registry.registration(clientId, accessToken: token) else {
            throw Self.invalidToken
        }
        return (registration, token)
    }

    private static var invalidToken: RequestRefusal {
        var refusal = RequestRefusal(
            status: .unauthorized,
            error: "invalid_token",
            description: "send the registration_access_token of this client as a Bearer token"
        )
        refusal.headers[.wwwAuthenticate] = #"Bearer error="invalid_token""#
        return refusal
    }
}
