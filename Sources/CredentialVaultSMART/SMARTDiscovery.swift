import CredentialVault
import Foundation
import Logging

/// Finds a FHIR server's SMART configuration: `.well-known/smart-configuration` first, then, for older servers,
/// the CapabilityStatement's `oauth-uris` extension.
struct SMARTDiscovery: Sendable {
    static let oauthURIsExtension = "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris"

    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    private struct WellKnown: Decodable {
        let issuer: String?
        let jwks_uri: String?
        let authorization_endpoint: String?
        let token_endpoint: String?
        let revocation_endpoint: String?
        let introspection_endpoint: String?
        let registration_endpoint: String?
        let management_endpoint: String?
        let capabilities: [String]?
        let code_challenge_methods_supported: [String]?
        let token_endpoint_auth_methods_supported: [String]?
        let token_endpoint_auth_signing_alg_values_supported: [String]?
        let scopes_supported: [String]?
        let grant_types_supported: [String]?
        let dpop_signing_alg_values_supported: [String]?
    }

    private struct CapabilityStatement: Decodable {
        struct Rest: Decodable {
            let security: Security?
        }
        struct Security: Decodable {
            let `extension`: [Extension]?
        }
        struct Extension: Decodable {
            let url: String?
            let valueUri: String?
            let `extension`: [Extension]?
        }
        let resourceType: String?
        let rest: [Rest]?
    }

    /// The configuration of the server at `fhirBase`.
    /// - Throws: ``VaultError``: `.discoveryFailed` when neither document gives the endpoints (naming both and
    ///   why), `.insecureURL` for an endpoint that is neither https nor loopback, `isNetworkError`.
    func configuration(for fhirBase: URL) async throws(VaultError) -> SMARTConfiguration {
        let wellKnownURL = fhirBase.appending(path: ".well-known/smart-configuration")
        let first = try await fetch(wellKnownURL, accept: "application/json")
        if first.status == 200, let document = try? UntrustedJSON.decode(WellKnown.self, from: first.body),
            let authorization = document.authorization_endpoint, let token = document.token_endpoint
        {
            return SMARTConfiguration(
                fhirBase: fhirBase,
                source: .wellKnown,
                issuer: document.issuer,
                jwksURI: try endpoint(document.jwks_uri, "jwks_uri", in: wellKnownURL),
                authorizationEndpoint: try endpoint(authorization, "authorization_endpoint", in: wellKnownURL)!,
                tokenEndpoint: try endpoint(token, "token_endpoint", in: wellKnownURL)!,
                revocationEndpoint: try endpoint(document.revocation_endpoint, "revocation_endpoint", in: wellKnownURL),
                introspectionEndpoint: try endpoint(
                    document.introspection_endpoint,
                    "introspection_endpoint",
                    in: wellKnownURL
                ),
                registrationEndpoint: try endpoint(
                    document.registration_endpoint,
                    "registration_endpoint",
                    in: wellKnownURL
                ),
                managementEndpoint: try endpoint(document.management_endpoint, "management_endpoint", in: wellKnownURL),
                capabilities: document.capabilities ?? [],
                codeChallengeMethods: document.code_challenge_methods_supported ?? [],
                tokenEndpointAuthMethods: document.token_endpoint_auth_methods_supported,
                tokenEndpointAuthSigningAlgorithms: document.token_endpoint_auth_signing_alg_values_supported,
                scopesSupported: document.scopes_supported,
                grantTypesSupported: document.grant_types_supported
            )
            .withDPoP(document.dpop_signing_alg_values_supported)
        }
        let firstProblem =
            first.status == 200 ? "is not a SMART configuration with both endpoints" : "answered HTTP \(first.status)"
        logger.debug(
            "no usable smart-configuration; reading the CapabilityStatement",
            metadata: ["status": "\(first.status)"]
        )

        let metadataURL = fhirBase.appending(path: "metadata")
        // A CapabilityStatement of a large server is far over the 1 MiB other answers get.
        let second = try await fetch(
            metadataURL,
            accept: "application/fhir+json",
            limit: FHIRConnection.maximumAnswerSize
        )
        let uris = second.status == 200 ? Self.oauthURIs(in: second.body) : [:]
        guard let authorization = uris["authorize"], let token = uris["token"] else {
            let secondProblem =
                second.status != 200
                ? "answered HTTP \(second.status)"
                : "has no \(Self.oauthURIsExtension) extension with authorize and token"
            throw .smartDiscoveryFailed(
                "for \(VaultError.printable(fhirBase.absoluteString, limit: 300)), \(wellKnownURL.path()) "
                    + "\(firstProblem), and \(metadataURL.path()) \(secondProblem)",
                host: fhirBase.displayHost,
                status: second.status
            )
        }
        return SMARTConfiguration(
            fhirBase: fhirBase,
            source: .capabilityStatement,
            issuer: nil,
            jwksURI: nil,
            authorizationEndpoint: try endpoint(authorization, "authorize", in: metadataURL)!,
            tokenEndpoint: try endpoint(token, "token", in: metadataURL)!,
            revocationEndpoint: try endpoint(uris["revoke"], "revoke", in: metadataURL),
            introspectionEndpoint: try endpoint(uris["introspect"], "introspect", in: metadataURL),
            registrationEndpoint: try endpoint(uris["register"], "register", in: metadataURL),
            managementEndpoint: try endpoint(uris["manage"], "manage", in: metadataURL),
            capabilities: [],
            codeChallengeMethods: [],
            tokenEndpointAuthMethods: nil,
            tokenEndpointAuthSigningAlgorithms: nil,
            scopesSupported: nil,
            grantTypesSupported: nil
        )
    }

    /// The `oauth-uris` sub-extensions (`authorize`, `token`, `register`, `manage`, `introspect`, `revoke`) of a
    /// CapabilityStatement; empty when it is not one or has none.
    static func oauthURIs(in body: Data) -> [String: String] {
        guard
            let statement = try? UntrustedJSON.decode(
                CapabilityStatement.self,
                from: body,
                maximumSize: FHIRConnection.maximumAnswerSize
            ),
            statement.resourceType == "CapabilityStatement"
        else { return [:] }
        var uris: [String: String] = [:]
        for rest in statement.rest ?? [] {
            for outer in rest.security?.extension ?? [] where outer.url == oauthURIsExtension {
                for inner in outer.extension ?? [] {
                    if let name = inner.url, let value = inner.valueUri, uris[name] == nil { uris[name] = value }
                }
            }
        }
        return uris
    }

    private func fetch(
        _ url: URL,
        accept: String,
        limit: Int = HTTPRequest.defaultMaximumAnswerSize
    ) async throws(VaultError) -> HTTPResponse {
        do {
            return try await transport.send(
                HTTPRequest(
                    method: "GET",
                    url: url,
                    headers: ["Accept": accept],
                    timeout: timeout,
                    maximumAnswerSize: limit
                ),
                logger: logger
            )
        } catch {
            throw .network(error, service: "the FHIR server", origin: .issuer)
        }
    }

    /// A discovered endpoint: absent is nil; present, it must be a URL secrets may go to (the core's rule for every
    /// discovered endpoint).
    private func endpoint(_ text: String?, _ name: String, in document: URL) throws(VaultError) -> URL? {
        try Discovery.endpoint(
            text,
            name,
            notAURL: .smartDiscoveryFailed(
                "the \(name) in \(VaultError.printable(document.absoluteString, limit: 300)) is not a URL",
                host: document.displayHost
            )
        )
    }
}
