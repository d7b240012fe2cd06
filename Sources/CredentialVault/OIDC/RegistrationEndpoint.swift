import Foundation
import Logging

/// The issuer's registration endpoint (RFC 7591) and a registration's management URI (RFC 7592): JSON in, JSON out.
struct RegistrationEndpoint: Sendable {
    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    /// Answer fields the issuer manages or that are secrets: never kept in ``ClientRegistration/metadata``, never
    /// sent back in an update except as RFC 7592 section 2.2 allows.
    static let fieldsNotKept: Set<String> = [
        "client_id", "client_secret", "client_secret_expires_at", "client_id_issued_at", "registration_access_token",
        "registration_client_uri", "jwks",
    ]

    /// Registers a client at `url` for the login that redirects to `redirectURI` asking for `scopes`.
    /// - Throws: ``VaultError`` `.registrationFailed` when the issuer refuses (its `error` and `error_description`
    ///   in words) or answers something that is not a registration; a network error when it cannot be reached.
    func register(
        at url: URL,
        _ settings: DynamicRegistration,
        redirectURI: URL,
        scopes: [String],
        supportedMethods: [String]?
    ) async throws(VaultError) -> ClientRegistration {
        let method = settings.method(supported: supportedMethods)
        let key = method == .privateKeyJWT ? ClientRegistration.newKey(alg: "ES384") : nil
        var metadata: [String: JSONValue] = [
            "client_name": .string(settings.clientName),
            "redirect_uris": [.string(redirectURI.absoluteString)],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": .string(scopes.joined(separator: " ")),
        ]
        if let method { metadata["token_endpoint_auth_method"] = .string(method.name) }
        let keys = key.map { [$0] } ?? []
        let body = Self.body(metadata, keys: keys)
        let answer = try await send(
            "POST",
            to: url,
            body: body,
            bearer: settings.initialAccessToken,
            expecting: [200, 201],
            doing: "register this client"
        )
        let registration = try Self.registration(from: answer, asked: method, keys: keys, host: url.displayHost)
        logger.debug(
            "the issuer registered a client",
            metadata: ["client_id": "\(registration.clientId)", "method": "\(registration.method)"]
        )
        return registration
    }

    /// Replaces the registration's keys at the issuer (RFC 7592 section 2.2: the whole metadata, with `client_id`).
    /// - Returns: the registration as the issuer now has it, holding `keys`.
    func update(
        _ registration: ClientRegistration,
        keys: [ClientRegistration.Key]
    ) async throws(VaultError)
        -> ClientRegistration
    {
        let (uri, token) = try Self.management(of: registration)
        var metadata = registration.metadata
        metadata["client_id"] = .string(registration.clientId)
        if let secret = registration.clientSecret { metadata["client_secret"] = .string(secret) }
        let answer = try await send(
            "PUT",
            to: uri,
            body: Self.body(metadata, keys: keys),
            bearer: token,
            expecting: [200],
            doing: "update this client's registration"
        )
        let updated = try Self.registration(from: answer, asked: registration.method, keys: keys, host: uri.displayHost)
        guard updated.clientId == registration.clientId else {
            throw .registrationFailed(
                "the issuer at \(uri.displayHost) answered an update with another client id",
                host: uri.displayHost,
                status: 200
            )
        }
        logger.debug("the issuer updated the client's keys", metadata: ["kids": "\(keys.map(\.kid))"])
        return registration.replacing(keys: keys, updatedBy: updated)
    }

    /// Deletes the registration at the issuer (RFC 7592 section 2.3).
    func delete(_ registration: ClientRegistration) async throws(VaultError) {
        let (uri, token) = try Self.management(of: registration)
        _ = try await send(
            "DELETE",
            to: uri,
            body: nil,
            bearer: token,
            expecting: [200, 204],
            doing: "delete this client's registration"
        )
        logger.debug("the issuer deleted the client's registration")
    }

    /// Where and with which token a registration is managed.
    private static func management(of registration: ClientRegistration) throws(VaultError) -> (URL, String) {
        guard let uri = registration.registrationClientURI, let token = registration.registrationAccessToken else {
            throw .registrationFailed(
                "the issuer gave this client no registration_client_uri and registration_access_token (RFC 7592), so "
                    + "its registration cannot be changed from here",
                host: nil,
                status: nil
            )
        }
        return (uri, token)
    }

    /// `metadata` with the public halves of `keys` as `jwks`, as JSON.
    private static func body(_ metadata: [String: JSONValue], keys: [ClientRegistration.Key]) -> Data {
        var all = metadata
        if let jwks = ClientRegistration.publicJWKS(of: keys) { all["jwks"] = jwks }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Strings, arrays and objects of them always encode.
        return try! encoder.encode(all)
    }

    private func send(
        _ method: String,
        to url: URL,
        body: Data?,
        bearer: String?,
        expecting statuses: Set<Int>,
        doing what: String
    ) async throws(VaultError) -> HTTPResponse {
        guard url.isSecureOrLoopback else {
            throw .insecureURL(url, role: "the registration endpoint", origin: .issuer)
        }
        var headers = ["Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        let request = HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)
        let response: HTTPResponse
        do {
            response = try await transport.send(request, logger: logger)
        } catch {
            throw .network(error, service: "the issuer's registration endpoint", origin: .issuer)
        }
        guard statuses.contains(response.status) else {
            // RFC 7591 section 3.2.2: an error answer is JSON with `error` and, maybe, `error_description`.
            let object = try? UntrustedJSON.decode([String: JSONValue].self, from: response.body)
            let code = object?["error"]?.stringValue.map { ": \(VaultError.printable($0, limit: 100))" } ?? ""
            let words = object?["error_description"]?.stringValue.map { " (\(VaultError.printable($0, limit: 200)))" }
            throw .registrationFailed(
                "the issuer at \(url.displayHost) refused to \(what) with HTTP \(response.status)\(code)\(words ?? "")",
                host: url.displayHost,
                status: response.status
            )
        }
        return response
    }

    /// The registration in a 200/201 answer (RFC 7591 section 3.2.1), holding `keys`; an answer that does not restate
    /// the method registered the one `asked` for (RFC 7591's default, `client_secret_basic`, when none was).
    private static func registration(
        from response: HTTPResponse,
        asked: ClientAuthentication.Method?,
        keys: [ClientRegistration.Key],
        host: String
    ) throws(VaultError) -> ClientRegistration {
        guard let object = try? UntrustedJSON.decode([String: JSONValue].self, from: response.body),
            let clientId = object["client_id"]?.stringValue, !clientId.isEmpty, clientId.utf8.count <= 1024
        else {
            throw .registrationFailed(
                "the issuer at \(host) answered the registration with no client_id",
                host: host,
                status: response.status
            )
        }
        let methodName =
            object["token_endpoint_auth_method"]?.stringValue ?? asked?.name
            ?? ClientAuthentication.Method.clientSecretBasic.name
        let method = ClientAuthentication.Method(name: methodName)
        let secret = object["client_secret"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        switch method {
        case .none: break
        case .clientSecretBasic, .clientSecretPost:
            guard secret != nil else {
                throw .registrationFailed(
                    "the issuer at \(host) registered a \(method) client but gave it no client_secret",
                    host: host,
                    status: response.status
                )
            }
        case .privateKeyJWT:
            guard !keys.isEmpty else {
                throw .registrationFailed(
                    "the issuer at \(host) registered a private_key_jwt client, which this registration did not ask "
                        + "for (no key was sent)",
                    host: host,
                    status: response.status
                )
            }
        default:
            throw .registrationFailed(
                "the issuer at \(host) registered the client with \(VaultError.printable(methodName, limit: 100)), "
                    + "which this library cannot use",
                host: host,
                status: response.status
            )
        }
        // The registration access token goes only to a management URI it may be sent to.
        let managementURI = object["registration_client_uri"]?.stringValue.flatMap(URL.init(string:))
            .flatMap { $0.isSecureOrLoopback ? $0 : nil }
        return ClientRegistration(
            clientId: clientId,
            method: method,
            registrationClientURI: managementURI,
            metadata: object.filter { !fieldsNotKept.contains($0.key) },
            clientSecret: secret,
            registrationAccessToken: managementURI == nil ? nil : object["registration_access_token"]?.stringValue,
            keys: method == .privateKeyJWT ? keys : []
        )
    }
}
