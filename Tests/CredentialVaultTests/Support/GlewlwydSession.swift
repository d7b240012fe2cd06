import CredentialVault
import Foundation

/// A signed-in session at glewlwyd's own API (`/api/auth/`): what a browser keeps as the `GLEWLWYD2_SESSION_ID`
/// cookie, sent with every later request. Requests go through the library's transport, trusting the test authority,
/// and follow no redirects.
struct GlewlwydSession: Sendable {
    let baseURL: URL
    let cookie: String

    /// Signs `username` in with a password, as glewlwyd's login page does: `POST /api/auth/` with JSON.
    static func signIn(baseURL: URL, username: String, password: String) async throws -> GlewlwydSession {
        let response = try await TestTLS.transport().send(
            HTTPRequest(
                method: "POST",
                url: baseURL.appending(path: "api/auth/"),
                headers: ["Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: ["username": username, "password": password]),
                timeout: 60
            )
        )
        guard response.status == 200, let setCookie = response.headers["set-cookie"],
            let cookie = setCookie.split(separator: ";").first.map(String.init), cookie.contains("=")
        else {
            throw GlewlwydError.loginFailed("POST /api/auth/ for \(username) answered HTTP \(response.status)")
        }
        return GlewlwydSession(baseURL: baseURL, cookie: cookie)
    }

    /// Sends `json` (if any) to `path` under the base URL with the session cookie.
    func send(_ method: String, _ path: String, json: Any? = nil) async throws -> HTTPResponse {
        try await send(method, url: baseURL.appending(path: path), json: json)
    }

    /// Sends `json` (if any) to `url` with the session cookie.
    func send(_ method: String, url: URL, json: Any? = nil) async throws -> HTTPResponse {
        var headers = ["Cookie": cookie]
        if json != nil { headers["Content-Type"] = "application/json" }
        return try await TestTLS.transport().send(
            HTTPRequest(
                method: method,
                url: url,
                headers: headers,
                body: try json.map { try JSONSerialization.data(withJSONObject: $0) },
                timeout: 60
            )
        )
    }

    /// As ``send(_:_:json:)``, and throws unless glewlwyd answers 200.
    @discardableResult
    func expectOK(_ method: String, _ path: String, json: Any? = nil) async throws -> HTTPResponse {
        let response = try await send(method, path, json: json)
        guard response.status == 200 else {
            throw GlewlwydError.adminRequestFailed(
                "\(method) \(path)",
                status: response.status,
                body: String(decoding: response.body, as: UTF8.self)
            )
        }
        return response
    }
}
