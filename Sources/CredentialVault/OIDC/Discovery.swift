package import Foundation
import Logging

/// Fetches and checks discovery documents: OpenID Connect Discovery 1.0, then RFC 8414 for what it omits.
package struct Discovery: Sendable {
    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    private struct Document: Decodable {
        let issuer: String?
        let authorization_endpoint: String?
        let token_endpoint: String?
        let revocation_endpoint: String?
        let introspection_endpoint: String?
        let end_session_endpoint: String?
        let registration_endpoint: String?
        let device_authorization_endpoint: String?
        let jwks_uri: String?
        let token_endpoint_auth_methods_supported: [String]?
        let revocation_endpoint_auth_methods_supported: [String]?
        let token_endpoint_auth_signing_alg_values_supported: [String]?
        let authorization_response_iss_parameter_supported: Bool?
        let dpop_signing_alg_values_supported: [String]?
        let grant_types_supported: [String]?
    }

    func metadata(for issuer: URL) async throws(VaultError) -> ProviderMetadata {
        let url = Self.openIDConfigurationURL(issuer)
        let document = try await fetch(url)
        guard let issuerText = document.issuer, Self.sameIssuer(issuerText, issuer) else {
            throw .discoveryFailed("\(url.absoluteString) names another issuer than \(issuer.absoluteString)")
        }
        guard let authorization = try Self.endpoint(document.authorization_endpoint, "authorization_endpoint"),
            let token = try Self.endpoint(document.token_endpoint, "token_endpoint")
        else {
            throw .discoveryFailed("\(url.absoluteString) lacks authorization_endpoint or token_endpoint")
        }
        var revocation = try Self.endpoint(document.revocation_endpoint, "revocation_endpoint")
        var revocationMethods = document.revocation_endpoint_auth_methods_supported
        if revocation == nil {
            // django-oauth-toolkit, among others, lists revocation only in its RFC 8414 metadata.
            for url in Self.authorizationServerURLs(issuer) {
                if let other = try? await fetch(url), let issuerText = other.issuer, Self.sameIssuer(issuerText, issuer)
                {
                    revocation = try Self.endpoint(other.revocation_endpoint, "revocation_endpoint")
                    revocationMethods = other.revocation_endpoint_auth_methods_supported
                    if revocation != nil { break }
                }
            }
        }
        var metadata = try ProviderMetadata(
            issuer: issuer,
            issuerIdentifier: issuerText,
            authorizationEndpoint: authorization,
            tokenEndpoint: token,
            revocationEndpoint: revocation,
            introspectionEndpoint: try Self.endpoint(document.introspection_endpoint, "introspection_endpoint"),
            endSessionEndpoint: try Self.endpoint(document.end_session_endpoint, "end_session_endpoint"),
            registrationEndpoint: try Self.endpoint(document.registration_endpoint, "registration_endpoint"),
            deviceAuthorizationEndpoint: try Self.endpoint(
                document.device_authorization_endpoint,
                "device_authorization_endpoint"
            ),
            jwksURI: try Self.endpoint(document.jwks_uri, "jwks_uri"),
            tokenEndpointAuthMethods: document.token_endpoint_auth_methods_supported,
            revocationEndpointAuthMethods: revocationMethods,
            tokenEndpointAuthSigningAlgorithms: document.token_endpoint_auth_signing_alg_values_supported,
            authorizationResponseIssuer: document.authorization_response_iss_parameter_supported ?? false,
            grantTypesSupported: document.grant_types_supported
        )
        metadata.dpopSigningAlgorithms = document.dpop_signing_alg_values_supported
        return metadata
    }

    private func fetch(_ url: URL) async throws(VaultError) -> Document {
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"], timeout: timeout),
                logger: logger
            )
        } catch {
            throw .network(error, service: "the issuer", origin: .issuer)
        }
        // A server failure or a rate limit is the server's answer for now, not a sign of a wrong issuer URL.
        if (500..<600).contains(response.status) || response.status == 429 {
            throw .discoveryUnavailable(url, status: response.status)
        }
        guard response.status == 200 else {
            throw .discoveryFailed(
                "\(url.absoluteString) answered HTTP \(response.status)",
                host: url.displayHost,
                status: response.status
            )
        }
        guard let document = try? UntrustedJSON.decode(Document.self, from: response.body) else {
            throw .discoveryFailed(
                "\(url.absoluteString) is not a discovery document",
                host: url.displayHost,
                status: 200
            )
        }
        return document
    }

    static func openIDConfigurationURL(_ issuer: URL) -> URL {
        issuer.appending(path: ".well-known/openid-configuration")
    }

    /// RFC 8414 section 3.1 puts the well-known segment between host and path; some servers serve it under the issuer.
    static func authorizationServerURLs(_ issuer: URL) -> [URL] {
        var urls: [URL] = []
        if var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) {
            let path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
            components.path = "/.well-known/oauth-authorization-server" + path
            if let url = components.url { urls.append(url) }
        }
        urls.append(issuer.appending(path: ".well-known/oauth-authorization-server"))
        return urls
    }

    static func sameIssuer(_ text: String, _ issuer: URL) -> Bool {
        func trimmed(_ value: String) -> String { value.hasSuffix("/") ? String(value.dropLast()) : value }
        return trimmed(text) == trimmed(issuer.absoluteString)
    }

    /// A discovered endpoint of the issuer's: absent is nil; present, it must be a URL secrets may go to.
    static func endpoint(_ text: String?, _ name: String) throws(VaultError) -> URL? {
        try endpoint(text, name, notAURL: .discoveryFailed("its \(name) is not a URL"))
    }

    /// A discovered endpoint, of any discovery (the issuer's, SMART's): absent is nil; present, it must be an
    /// absolute URL with a host, and one secrets may go to (``requireSecure(_:_:)``).
    /// - Parameters:
    ///   - text: the field's value; nil when the document has no such field.
    ///   - name: the field's name (`token_endpoint`), for the error.
    ///   - notAURL: the error when `text` is not such a URL, in the words of the discovery that read it.
    /// - Returns: the endpoint; nil when `text` is nil.
    /// - Throws: `notAURL()`, or ``VaultError`` `.insecureURL` when the URL is neither https nor a loopback address.
    package static func endpoint(
        _ text: String?,
        _ name: String,
        notAURL: @autoclosure () -> VaultError
    ) throws(VaultError) -> URL? {
        guard let text else { return nil }
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else { throw notAURL() }
        try requireSecure(url, name)
        return url
    }

    /// The rule for every discovered endpoint: https, or plain http to a loopback address (`URL.isSecureOrLoopback`).
    package static func requireSecure(_ url: URL, _ name: String) throws(VaultError) {
        guard url.isSecureOrLoopback else { throw .insecureURL(url, role: "the discovered \(name)", origin: .issuer) }
    }
}
