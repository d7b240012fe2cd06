import Foundation

/// What the client needs from an issuer's discovery documents.
public struct ProviderMetadata: Sendable, Equatable {
    /// The issuer, exactly as configured.
    public let issuer: URL
    /// Where the user logs in (authorization code flow).
    public let authorizationEndpoint: URL
    /// Where codes and refresh tokens become tokens.
    public let tokenEndpoint: URL
    /// RFC 7009 revocation, from OIDC discovery or, where that omits it, the RFC 8414 document.
    public let revocationEndpoint: URL?
    /// RP-initiated logout, when offered.
    public let endSessionEndpoint: URL?
}

/// Fetches and checks discovery documents: OpenID Connect Discovery 1.0, then RFC 8414 for what it omits.
struct Discovery: Sendable {
    let transport: any HTTPTransport
    let timeout: TimeInterval

    private struct Document: Decodable {
        let issuer: String?
        let authorization_endpoint: String?
        let token_endpoint: String?
        let revocation_endpoint: String?
        let end_session_endpoint: String?
    }

    func metadata(for issuer: URL) async throws(AuthError) -> ProviderMetadata {
        let document = try await fetch(Self.openIDConfigurationURL(issuer))
        guard let issuerText = document.issuer, Self.sameIssuer(issuerText, issuer) else {
            throw .failedToDiscoverConfiguration(
                reason: "the document names another issuer than \(issuer.absoluteString)"
            )
        }
        guard let authorization = Self.endpoint(document.authorization_endpoint),
            let token = Self.endpoint(document.token_endpoint)
        else {
            throw .failedToDiscoverConfiguration(
                reason: "authorization_endpoint or token_endpoint is missing or not https"
            )
        }
        var revocation = Self.endpoint(document.revocation_endpoint)
        if revocation == nil {
            // django-oauth-toolkit, among others, lists revocation only in its RFC 8414 metadata.
            for url in Self.authorizationServerURLs(issuer) {
                if let other = try? await fetch(url), let issuerText = other.issuer, Self.sameIssuer(issuerText, issuer)
                {
                    revocation = Self.endpoint(other.revocation_endpoint)
                    if revocation != nil { break }
                }
            }
        }
        return ProviderMetadata(
            issuer: issuer,
            authorizationEndpoint: authorization,
            tokenEndpoint: token,
            revocationEndpoint: revocation,
            endSessionEndpoint: Self.endpoint(document.end_session_endpoint)
        )
    }

    private func fetch(_ url: URL) async throws(AuthError) -> Document {
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"], timeout: timeout)
            )
        } catch {
            throw .networkError(host: error.host, reason: error.reason)
        }
        guard response.status == 200 else {
            throw .failedToDiscoverConfiguration(reason: "\(url.absoluteString) answered HTTP \(response.status)")
        }
        guard let document = try? JSONDecoder().decode(Document.self, from: response.body) else {
            throw .failedToDiscoverConfiguration(reason: "\(url.absoluteString) is not a discovery document")
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

    static func endpoint(_ text: String?) -> URL? {
        guard let text, let url = URL(string: text), url.isSecureOrLoopback else { return nil }
        return url
    }
}
