import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a request to the token, revocation or introspection endpoint authenticates its client.
enum ClientCredential: Sendable {
    /// `client_id` alone.
    case clientId(String)
    /// HTTP Basic, id and secret form-urlencoded first (RFC 6749 section 2.3.1).
    case basic(String, String)
    /// `client_id` and `client_secret` in the form.
    case post(String, String)
    /// `client_assertion_type` and `client_assertion`.
    case assertion(String)
    /// Nothing at all.
    case nothing
}

/// A client registered by the test: what the registration answered.
struct Registered: Sendable {
    let clientId: String
    let secret: String?
    let registrationAccessToken: String
    let registrationClientURI: URL
    let redirectURI: String

    /// The credential of its method, right.
    func credential(_ method: String, assertion: String? = nil) -> ClientCredential {
        switch method {
        case "client_secret_basic": .basic(clientId, secret ?? "")
        case "client_secret_post": .post(clientId, secret ?? "")
        case "private_key_jwt": .assertion(assertion ?? "")
        default: .clientId(clientId)
        }
    }
}

/// A client of the registration endpoint (RFC 7591, RFC 7592), and of the code flow under the credentials it got.
struct RegistrationClient: Sendable {
    let server: KeyServiceMockServer
    let http: HTTPClient
    let clock: ManualClock
    let keys: BackendKeys

    /// The redirect URI the tests register: a loopback one, so any port matches.
    static let redirectURI = "http://127.0.0.1/callback"

    /// Runs `body` against a server with dynamic registration on (`registration`), in the SMART mode unless
    /// `smart` is false, checking assertions by `assertions` (in the SMART mode).
    static func withServer(
        smart: Bool = true,
        registration: Bool = true,
        assertions: ClientAssertionRules = ClientAssertionRules(),
        _ body: (RegistrationClient) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        var configuration =
            smart
            ? SMARTClient.configuration(clock: clock) { $0.clientAssertions = assertions }
            : KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        configuration.dynamicRegistration = registration
        let keys = try BackendKeys.shared.get()
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            try await body(RegistrationClient(server: server, http: HTTPClient(), clock: clock, keys: keys))
        }
    }

    var oidc: OIDCClient { OIDCClient(server: server, http: http) }
    var tokenEndpoint: String { server.issuer.absoluteString + "/protocol/openid-connect/token" }
    func endpoint(_ name: String) -> String { server.issuer.absoluteString + "/protocol/openid-connect/" + name }

    /// The public JWK Set of `BackendKeys` with the keys `kids` only, as a JSON object.
    func jwks(_ kids: [String]) throws -> [String: Any] {
        let all = try #require(try JSONSerialization.jsonObject(with: Data(keys.jwks().utf8)) as? [String: Any])
        let members = try #require(all["keys"] as? [[String: Any]])
        return ["keys": members.filter { kids.contains($0["kid"] as? String ?? "") }]
    }

    /// `POST` the registration endpoint with `metadata` as JSON.
    func register(_ metadata: [String: Any]) async throws -> HTTPAnswer {
        try await http.post(server.registrationEndpoint, body: try JSONSerialization.data(withJSONObject: metadata))
    }

    /// Registers a code-flow client with `method` (and `metadata` added) and returns what it got.
    func registered(
        _ method: String,
        _ metadata: [String: Any] = [:]
    ) async throws -> Registered {
        var body: [String: Any] = [
            "redirect_uris": [Self.redirectURI], "token_endpoint_auth_method": method, "client_name": "Test \(method)",
            "grant_types": ["authorization_code", "refresh_token"], "scope": "openid offline_access",
        ]
        if method == "private_key_jwt" { body["jwks"] = try jwks(["rsa-1", "ec-1"]) }
        for (name, value) in metadata { body[name] = value }
        let answer = try await register(body)
        try #require(answer.status == 201, "\(answer.string("error_description") ?? "")")
        return Registered(
            clientId: try #require(answer.string("client_id")),
            secret: answer.string("client_secret"),
            registrationAccessToken: try #require(answer.string("registration_access_token")),
            registrationClientURI: try #require(URL(string: answer.string("registration_client_uri") ?? "")),
            redirectURI: Self.redirectURI
        )
    }

    /// An RFC 7592 request to the client's configuration endpoint with `token` as Bearer (none when `nil`).
    func manage(
        _ method: String,
        _ registered: Registered,
        token: String?,
        body: [String: Any]? = nil
    ) async throws -> HTTPAnswer {
        var request = URLRequest(url: registered.registrationClientURI)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        return try await http.send(request)
    }

    /// A valid assertion of `clientId` for `aud` (the token endpoint unless given), signed by `kid` (`rsa-1`:
    /// RS384, `ec-1`: ES384, anything else: a key not registered); `adjust` changes claims.
    func assertion(
        _ clientId: String,
        kid: String = "rsa-1",
        aud: String? = nil,
        _ adjust: (inout AssertionClaims) -> Void = { _ in }
    ) async throws -> String {
        let now = Int(clock.now.timeIntervalSince1970)
        var claims = AssertionClaims(
            iss: clientId,
            sub: clientId,
            aud: aud ?? tokenEndpoint,
            exp: now + 240,
            iat: now
        )
        adjust(&claims)
        let signer: BackendKeys.Signer = kid == "rsa-1" ? .rsa : kid == "ec-1" ? .ec : .stranger
        return try await keys.sign(claims, kid: kid, signer: signer)
    }

    /// `POST` `endpoint` (`token`, `revoke`, `token/introspect`) with `form` and `credential`.
    func post(_ endpoint: String, _ form: [String: String], _ credential: ClientCredential) async throws -> HTTPAnswer {
        var form = form
        var request = URLRequest(url: oidc.url(endpoint))
        switch credential {
        case .clientId(let id):
            form["client_id"] = id
        case .basic(let id, let secret):
            let pair = formEncoded(["a": id]).dropFirst(2) + ":" + formEncoded(["a": secret]).dropFirst(2)
            request.setValue("Basic \(Data(pair.utf8).base64EncodedString())", forHTTPHeaderField: "Authorization")
        case .post(let id, let secret):
            form["client_id"] = id
            form["client_secret"] = secret
        case .assertion(let assertion):
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            form["client_assertion"] = assertion
        case .nothing:
            break
        }
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(formEncoded(form).utf8)
        return try await http.send(request)
    }

    /// Runs the authorization request of `registered` (with `aud` in the SMART mode) and returns a code and its
    /// verifier; the redirect URI is the registered one on another port (RFC 8252).
    func code(_ registered: Registered, port: Int = 51_234) async throws -> (code: String, verifier: String) {
        var client = oidc
        client.clientId = registered.clientId
        client.redirectURI = "http://127.0.0.1:\(port)/callback"
        let pkce = OIDCClient.pkce()
        var parameters: [String: String?] = ["code_challenge": pkce.challenge, "scope": "openid offline_access"]
        parameters["aud"] = server.fhirBase.absoluteString
        let answer = try await client.authorize(parameters)
        try #require(answer.status == 302)
        let fields = try OIDCClient.redirectFields(answer)
        return (try #require(fields["code"], "\(fields)"), pkce.verifier)
    }

    /// Exchanges a fresh code of `registered` with `credential`.
    func exchange(
        _ registered: Registered,
        _ credential: ClientCredential,
        port: Int = 51_234
    ) async throws -> HTTPAnswer {
        let (code, verifier) = try await self.code(registered, port: port)
        return try await post(
            "token",
            [
                "grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "redirect_uri": "http://127.0.0.1:\(port)/callback",
            ],
            credential
        )
    }

    /// Refreshes `refreshToken` with `credential`.
    func refresh(_ refreshToken: String, _ credential: ClientCredential) async throws -> HTTPAnswer {
        try await post("token", ["grant_type": "refresh_token", "refresh_token": refreshToken], credential)
    }
}
