import Foundation
import KeyServiceMock
import Testing

/// A SMART app talking to the server's SMART mode: the code flow with `aud`, and the FHIR endpoint.
struct SMARTClient: Sendable {
    let server: KeyServiceMockServer
    let http: HTTPClient

    var oidc: OIDCClient { OIDCClient(server: server, http: http) }

    /// A configuration with the SMART mode on, adjusted by `adjust`.
    static func configuration(
        clock: ManualClock? = nil,
        _ adjust: (inout SMARTMode) -> Void = { _ in }
    ) -> KeyServiceMockConfiguration {
        var mode = SMARTMode()
        adjust(&mode)
        var configuration = KeyServiceMockConfiguration()
        configuration.smart = mode
        if let clock { configuration.now = clock.dateProvider }
        return configuration
    }

    func smartURL(_ relative: String) -> URL {
        URL(string: server.fhirBase.absoluteString + "/" + relative)!
    }

    /// The authorization request of a SMART app: `aud` is the FHIR base unless overridden.
    func authorize(scope: String, _ overrides: [String: String?] = [:]) async throws -> HTTPAnswer {
        var parameters: [String: String?] = ["scope": scope, "aud": server.fhirBase.absoluteString]
        for (name, value) in overrides { parameters[name] = value }
        return try await oidc.authorize(parameters)
    }

    /// Runs the code flow with PKCE S256 (and `launch` for an EHR launch) and returns the token response.
    func login(scope: String, launch: String? = nil) async throws -> JSONObject {
        let pkce = OIDCClient.pkce()
        let answer = try await authorize(scope: scope, ["code_challenge": pkce.challenge, "launch": launch])
        try #require(answer.status == 302)
        let code = try #require(try OIDCClient.redirectFields(answer)["code"])
        let tokens = try await oidc.exchange(code: code, verifier: pkce.verifier)
        try #require(tokens.status == 200)
        return tokens.json
    }

    /// The access token of a standalone login with `scope`.
    func accessToken(scope: String) async throws -> String {
        try #require(try await login(scope: scope).string("access_token"))
    }

    /// `GET {fhirBase}/{relative}` with the access token, if any.
    func fhir(_ relative: String, token: String?) async throws -> HTTPAnswer {
        try await fhir(url: smartURL(relative), token: token)
    }

    func fhir(url: URL, token: String?) async throws -> HTTPAnswer {
        try await http.get(url, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    func introspect(_ token: String) async throws -> JSONObject {
        let answer = try await http.post(oidc.url("token/introspect"), form: ["token": token, "client_id": "vault"])
        try #require(answer.status == 200)
        return answer.json
    }
}
