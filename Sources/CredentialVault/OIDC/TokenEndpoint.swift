import Foundation

/// A successful token-endpoint answer (RFC 6749 section 5.1). Holds secrets; `description` shows none.
struct TokenResponse: Sendable, CustomStringConvertible {
    let accessToken: String
    let refreshToken: String?
    let idToken: String?
    let expiresIn: TimeInterval?

    var description: String { "TokenResponse(redacted)" }
}

/// The token endpoint: form-encoded POSTs of public-client grants.
struct TokenEndpoint: Sendable {
    let url: URL
    let clientId: String
    let transport: any HTTPTransport
    let timeout: TimeInterval

    private struct Success: Decodable {
        let access_token: String
        let refresh_token: String?
        let id_token: String?
        let expires_in: Double?
    }

    private struct Failure: Decodable {
        let error: String
    }

    func refresh(_ refreshToken: String) async throws(AuthError) -> TokenResponse {
        try await post(["grant_type": "refresh_token", "refresh_token": refreshToken])
    }

    func exchange(code: String, verifier: String, redirectURI: String) async throws(AuthError) -> TokenResponse {
        try await post([
            "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": redirectURI,
        ])
    }

    private func post(_ fields: [String: String]) async throws(AuthError) -> TokenResponse {
        var all = fields
        all["client_id"] = clientId
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Data(FormEncoding.encode(all).utf8),
            timeout: timeout
        )
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw .networkError(host: error.host, reason: error.reason)
        }
        if response.status == 200 {
            guard let success = try? JSONDecoder().decode(Success.self, from: response.body),
                !success.access_token.isEmpty
            else {
                throw .failedToGetAccessToken(reason: "the token endpoint's answer does not decode")
            }
            return TokenResponse(
                accessToken: success.access_token,
                refreshToken: success.refresh_token.flatMap { $0.isEmpty ? nil : $0 },
                idToken: success.id_token,
                expiresIn: success.expires_in
            )
        }
        // RFC 6749 section 5.2: invalid_grant means the grant (here: the refresh token or code) is dead.
        let failure = try? JSONDecoder().decode(Failure.self, from: response.body)
        if failure?.error == "invalid_grant" { throw .refreshTokenExpired }
        let code = failure.map { String($0.error.prefix(64)) } ?? "no error code"
        throw .failedToGetAccessToken(reason: "the token endpoint answered HTTP \(response.status) (\(code))")
    }
}

/// application/x-www-form-urlencoded, as RFC 6749 appendix B asks.
enum FormEncoding {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }
            .map { "\(escape($0.key))=\(escape($0.value))" }
            .joined(separator: "&")
    }

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
