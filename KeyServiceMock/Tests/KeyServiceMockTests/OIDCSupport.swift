import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

/// A client of the identity provider, as a native app with a loopback redirect would be.
struct OIDCClient: Sendable {
    let server: KeyServiceMockServer
    let http: HTTPClient
    var clientId = "vault"
    var redirectURI = "http://127.0.0.1:49152/callback"

    var endpoints: URL { server.issuer.appendingPathComponent("protocol/openid-connect") }

    func url(_ endpoint: String) -> URL { endpoints.appendingPathComponent(endpoint) }

    /// A PKCE pair: a random verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        return (verifier, Base64URL.encode(SHA256.hash(Data(verifier.utf8))))
    }

    /// Calls the authorization endpoint with `parameters` (defaults filled in) and returns the answer.
    func authorize(_ overrides: [String: String?] = [:]) async throws -> HTTPAnswer {
        var parameters: [String: String] = [
            "response_type": "code", "client_id": clientId, "redirect_uri": redirectURI,
            "scope": "openid", "state": "st-1", "nonce": "n-1",
            "code_challenge": Self.pkce().challenge, "code_challenge_method": "S256",
        ]
        for (name, value) in overrides { parameters[name] = value }
        var components = URLComponents(url: url("auth"), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = formEncoded(parameters)
        return try await http.get(components.url!)
    }

    /// The query fields of a redirect's Location.
    static func redirectFields(_ answer: HTTPAnswer) throws -> [String: String] {
        let location = try #require(answer.header("Location"))
        let components = try #require(URLComponents(string: location))
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] { fields[item.name] = item.value }
        return fields
    }

    /// Runs the code flow and returns the code and the verifier that goes with it.
    func code(nonce: String = "n-1", scope: String = "openid") async throws -> (code: String, verifier: String) {
        let pkce = Self.pkce()
        let answer = try await authorize(["code_challenge": pkce.challenge, "nonce": nonce, "scope": scope])
        try #require(answer.status == 302)
        return (try #require(try Self.redirectFields(answer)["code"]), pkce.verifier)
    }

    func exchange(code: String, verifier: String?, redirectURI: String? = nil) async throws -> HTTPAnswer {
        var form = [
            "grant_type": "authorization_code", "code": code, "client_id": clientId,
            "redirect_uri": redirectURI ?? self.redirectURI,
        ]
        form["code_verifier"] = verifier
        return try await http.post(url("token"), form: form)
    }

    func refresh(_ refreshToken: String) async throws -> HTTPAnswer {
        try await http.post(
            url("token"),
            form: ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientId]
        )
    }

    func passwordLogin(username: String = "demo", password: String = "demo-password") async throws -> HTTPAnswer {
        try await http.post(
            url("token"),
            form: [
                "grant_type": "password", "username": username, "password": password, "client_id": clientId,
                "scope": "openid",
            ]
        )
    }

    /// Logs in with the password grant and returns the token response.
    func tokens() async throws -> JSONObject {
        let answer = try await passwordLogin()
        try #require(answer.status == 200)
        return answer.json
    }

    func revoke(_ token: String, hint: String? = nil) async throws -> HTTPAnswer {
        var form = ["token": token, "client_id": clientId]
        form["token_type_hint"] = hint
        return try await http.post(url("revoke"), form: form)
    }

    func userinfo(_ accessToken: String) async throws -> HTTPAnswer {
        try await http.get(url("userinfo"), headers: ["Authorization": "Bearer \(accessToken)"])
    }
}
