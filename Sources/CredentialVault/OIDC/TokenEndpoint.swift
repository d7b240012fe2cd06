import Foundation
import Logging

/// The token endpoint: form-encoded POSTs of public-client grants.
struct TokenEndpoint: Sendable {
    let url: URL
    let clientId: String
    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    private struct Success: Decodable {
        let access_token: String
        let refresh_token: String?
        let id_token: String?
        let expires_in: Double?
    }

    private struct Failure: Decodable {
        let error: String
    }

    private var host: String { url.displayHost }

    func refresh(_ refreshToken: String) async throws(VaultError) -> TokenResponse {
        try await post(["grant_type": "refresh_token", "refresh_token": refreshToken])
    }

    func exchange(code: String, verifier: String, redirectURI: String) async throws(VaultError) -> TokenResponse {
        try await post([
            "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": redirectURI,
        ])
    }

    private func post(_ fields: [String: String]) async throws(VaultError) -> TokenResponse {
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
            response = try await transport.send(request, logger: logger)
        } catch {
            throw .network(error, service: "the issuer's token endpoint", origin: .issuer)
        }
        if response.status == 200 {
            guard let success = try? JSONDecoder().decode(Success.self, from: response.body),
                !success.access_token.isEmpty
            else {
                throw .tokenAnswerUnusable("the answer is not a token response (RFC 6749 section 5.1)", host: host)
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
        if failure?.error == "invalid_grant" { throw .loginExpired }
        throw .tokenRequestRefused(status: response.status, errorCode: failure?.error, host: host)
    }
}
