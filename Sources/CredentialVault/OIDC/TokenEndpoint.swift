package import Foundation
package import Logging

/// The token endpoint: form-encoded POSTs of the code and refresh grants, with the client's authentication.
package struct TokenEndpoint: Sendable {
    /// The endpoint, with `token_endpoint_auth_methods_supported` as its methods.
    let endpoint: AuthenticatedEndpoint

    /// The token endpoint at `url`, for the client `clientId` authenticating with `authentication`; a private key's
    /// assertions are signed with one of `signingAlgorithms` (the server's
    /// `token_endpoint_auth_signing_alg_values_supported`) when it lists any, and name `url` as `aud` (or `issuer`,
    /// as the authentication says; `url` when nil).
    package init(
        url: URL,
        clientId: String,
        authentication: ClientAuthentication,
        supportedMethods: [String]?,
        signingAlgorithms: [String]? = nil,
        issuer: String? = nil,
        now: @escaping @Sendable () -> Date,
        transport: any HTTPTransport,
        timeout: TimeInterval,
        logger: Logger
    ) {
        endpoint = AuthenticatedEndpoint(
            url: url,
            clientId: clientId,
            authentication: authentication,
            supportedMethods: supportedMethods,
            audiences: AssertionAudiences(
                tokenEndpoint: url,
                issuer: issuer ?? url.absoluteString,
                signingAlgorithms: signingAlgorithms
            ),
            now: now,
            transport: transport,
            timeout: timeout,
            logger: logger
        )
    }

    init(endpoint: AuthenticatedEndpoint) {
        self.endpoint = endpoint
    }

    /// The longest access-token lifetime taken from `expires_in`: one year.
    static let maximumLifetime: TimeInterval = 365 * 24 * 60 * 60

    /// The lifetime the library takes from `expires_in`, in seconds: a value that is not a finite number (NaN,
    /// infinity, text) is no hint at all (nil: the access token's own `exp` decides, else it is refreshed at
    /// every use); a negative value is 0 (expired at once); more than ``maximumLifetime`` is that maximum.
    static func lifetime(expiresIn seconds: Double?) -> TimeInterval? {
        guard let seconds, seconds.isFinite else { return nil }
        return min(max(seconds, 0), maximumLifetime)
    }

    /// The fields of a token answer that are not kept as context: the tokens (secrets kept apart, or not at all)
    /// and the lifetimes, which are read at once and change with every answer.
    static let fieldsNotKept: Set<String> = [
        "access_token", "refresh_token", "id_token", "expires_in", "refresh_expires_in", "device_secret",
    ]

    /// A 200 answer's body as a token response (RFC 6749 section 5.1), or nil when it is not one.
    ///
    /// The answer is read once, as members: `access_token` a non-empty string, `refresh_token` and `id_token` strings
    /// when present (null reads as absent; anything else is no token response). `expires_in` as servers send it: a
    /// JSON number, or a number in a string (some do); any other value is no hint, without failing the whole answer
    /// (the field is only a hint, RFC 6749 section 5.1). A number past `Double`'s range anywhere in the answer is no
    /// JSON this library reads: the whole answer is refused.
    static func tokenResponse(from body: Data) -> TokenResponse? {
        guard let fields = try? UntrustedJSON.members(from: body),
            case .string(let accessToken)? = fields["access_token"], !accessToken.isEmpty,
            let refreshToken = UntrustedJSON.optionalString("refresh_token", in: fields),
            let idToken = UntrustedJSON.optionalString("id_token", in: fields)
        else { return nil }
        let expiresIn: Double? =
            switch fields["expires_in"] {
            case .number(let seconds)?: seconds
            case .string(let text)?: Double(text)
            default: nil
            }
        return TokenResponse(
            accessToken: accessToken,
            refreshToken: refreshToken.flatMap { $0.isEmpty ? nil : $0 },
            idToken: idToken,
            expiresIn: lifetime(expiresIn: expiresIn),
            context: fields.filter { !fieldsNotKept.contains($0.key) && !$0.key.hasPrefix(Auth.appContextPrefix) }
        )
    }

    private struct Failure: Decodable {
        let error: String
        let error_description: String?
    }

    private var host: String { endpoint.host }

    /// Redeems a refresh token (RFC 6749 section 6).
    ///
    /// - Parameters:
    ///   - refreshToken: the refresh token, sent as `refresh_token`.
    ///   - extraFields: more form fields (RFC 8707 `resource`, a narrower `scope`); they never replace the
    ///     grant's own.
    /// - Returns: the issuer's tokens.
    /// - Throws: ``VaultError``: `isLoginExpired` for `invalid_grant` or a bare 400 or 401 (the refresh token is
    ///   dead), `isNetworkError` when no answer came, `.resourceRefused` for `invalid_target`, else the refusal.
    func refresh(
        _ refreshToken: String,
        extraFields: [String: String] = [:]
    ) async throws(VaultError) -> TokenResponse {
        let fields = ["grant_type": "refresh_token", "refresh_token": refreshToken]
        return try await post(fields.merging(extraFields) { own, _ in own }, deadOnBareRefusal: true)
    }

    /// Any other grant, such as token exchange (RFC 8693, ``TokenExchangeRequest``): `fields` as the form.
    func grant(_ fields: [String: String]) async throws(VaultError) -> TokenResponse {
        try await post(fields)
    }

    /// The client credentials grant (RFC 6749 section 4.4): an access token for the client itself, no user and no
    /// refresh token (SMART backend services, with a private key's assertion).
    package func clientCredentials(scope: String) async throws(VaultError) -> TokenResponse {
        try await post(["grant_type": "client_credentials", "scope": scope])
    }

    func exchange(code: String, verifier: String, redirectURI: String) async throws(VaultError) -> TokenResponse {
        try await post([
            "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": redirectURI,
        ])
    }

    /// The grant type of a device code (RFC 8628 section 3.4).
    static let deviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// One poll with a device code (RFC 8628 section 3.4): the tokens, or the word to wait and poll again.
    /// - Throws: ``VaultError``: `.authorizationDenied` for `access_denied`, `.deviceCodeExpired` for `expired_token`,
    ///   and whatever any other grant's refusal is.
    func pollDeviceCode(_ deviceCode: String) async throws(VaultError) -> DeviceCodePoll {
        let fields = ["grant_type": Self.deviceCodeGrantType, "device_code": deviceCode]
        let response = try await send(fields)
        if response.status != 200, let failure = try? UntrustedJSON.decode(Failure.self, from: response.body) {
            switch failure.error {
            case "authorization_pending": return .pending
            case "slow_down": return .slowDown
            case "access_denied": throw .authorizationDenied(host: host)
            case "expired_token": throw .deviceCodeExpired(host: host)
            default: break
            }
        }
        return .issued(try answer(response, to: fields))
    }

    /// Sends `fields` to the token endpoint and reads the answer.
    ///
    /// - Parameters:
    ///   - fields: the form, with its `grant_type`.
    ///   - deadOnBareRefusal: a 400 or 401 without an OAuth error body means the grant is dead (servers
    ///     answer a refresh token of a revoked family that way), not that the request was wrong.
    /// - Returns: the issuer's tokens.
    /// - Throws: ``VaultError``: `isNetworkError` when no answer came, else what the refusal means
    ///   (``answer(_:to:deadOnBareRefusal:)``).
    private func post(
        _ fields: [String: String],
        deadOnBareRefusal: Bool = false
    ) async throws(VaultError)
        -> TokenResponse
    {
        try answer(try await send(fields), to: fields, deadOnBareRefusal: deadOnBareRefusal)
    }

    /// The answer to `fields`, whatever its status.
    /// - Throws: ``VaultError`` `isNetworkError` when none came.
    private func send(_ fields: [String: String]) async throws(VaultError) -> HTTPResponse {
        switch try await endpoint.post(fields) {
        case .success(let answer): return answer
        case .failure(let error): throw .network(error, service: "the issuer's token endpoint", origin: .issuer)
        }
    }

    /// The tokens of `response`, the answer to `fields`, or the error its refusal means.
    private func answer(
        _ response: HTTPResponse,
        to fields: [String: String],
        deadOnBareRefusal: Bool = false
    ) throws(VaultError) -> TokenResponse {
        if response.status == 200 {
            guard let answer = Self.tokenResponse(from: response.body) else {
                throw .tokenAnswerUnusable("the answer is not a token response (RFC 6749 section 5.1)", host: host)
            }
            return answer
        }
        // RFC 6749 section 5.2: invalid_grant means the grant (here: the refresh token or code) is dead.
        let failure = try? UntrustedJSON.decode(Failure.self, from: response.body)
        if let failure, failure.error == "invalid_grant" { throw .loginExpired(saying: failure.error_description) }
        // RFC 8707 section 2: the resource (or RFC 8693 audience) asked for is not one the issuer serves.
        if let failure, failure.error == "invalid_target" {
            // A server that echoes the request must not put a token in an error message.
            let words = failure.error_description.flatMap { text in
                ["refresh_token", "subject_token"].contains { fields[$0].map { text.contains($0.prefix(16)) } ?? false }
                    ? nil : text
            }
            throw .resourceRefused(fields["resource"] ?? fields["audience"], saying: words, host: host)
        }
        // A 401 that challenges the client's own credentials (RFC 6749 section 5.2) is about the client, not the
        // login: a wrong or rotated client secret must not send the user to log in again.
        let challengesClient =
            response.status == 401 && endpoint.authentication.method != ClientAuthentication.Method.none
            && response.headers["www-authenticate"] != nil
        if failure == nil, deadOnBareRefusal, response.status == 400 || response.status == 401, !challengesClient {
            let text = String(decoding: response.body.prefix(512), as: UTF8.self)
            // A server that echoes the request (the refresh token, a code) must not put it in an error message.
            let echoed = fields.contains { name, value in
                !["grant_type", "redirect_uri"].contains(name) && value.count >= 8 && text.contains(value.prefix(16))
            }
            throw .loginExpired(saying: echoed ? nil : text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // A refused client authentication names the rule broken (SMART servers: "no kid", "RS384 or ES384"); a
        // description that echoes a field sent (a code, a token) is left out.
        let words = failure.flatMap { failure in
            failure.error == "invalid_client" ? failure.error_description : nil
        }
        let echoed = words.map { words in
            fields.contains { name, value in
                name != "grant_type" && value.count >= 8 && words.contains(value.prefix(16))
            }
        }
        throw .tokenRequestRefused(
            status: response.status,
            errorCode: failure?.error,
            host: host,
            saying: echoed == false ? words : nil
        )
    }
}
