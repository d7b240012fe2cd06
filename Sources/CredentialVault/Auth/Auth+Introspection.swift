import Foundation

extension Auth {
    /// What the issuer's introspection endpoint (RFC 7662) says about `token`, asked with the client's
    /// authentication (the session's registered client, else the configured one). Without a token, the session's access token (refreshed first when it is due).
    /// - Throws: ``VaultError``: `isConfigurationError` when the issuer offers no introspection endpoint,
    ///   `.serverRefused` for an error answer, `isNetworkError`.
    public func introspect(
        _ token: String? = nil,
        typeHint: String? = nil
    ) async throws(VaultError) -> TokenIntrospection {
        let metadata = try await metadata()
        guard let url = metadata.introspectionEndpoint else {
            throw VaultError(
                .invalidConfiguration,
                "The issuer offers no introspection endpoint (RFC 7662).",
                origin: .issuer,
                host: metadata.tokenEndpoint.displayHost
            )
        }
        let subject: String
        let hint: String?
        if let token {
            (subject, hint) = (token, typeHint)
        } else {
            (subject, hint) = (try await getAccessToken().token, "access_token")
        }
        let endpoint = try await authenticated(
            url,
            methods: metadata.tokenEndpointAuthMethods,
            as: session?.refreshToken.client
        )
        return try await IntrospectionEndpoint(endpoint: endpoint).introspect(subject, typeHint: hint)
    }
}
