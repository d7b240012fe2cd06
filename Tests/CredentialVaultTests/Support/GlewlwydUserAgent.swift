import CredentialVault
import Foundation

/// What a browser does at glewlwyd's login page (`login.html`, a script over glewlwyd's API): signs the user in with
/// the password (`POST /api/auth/`), approves the client's scopes (`PUT /api/auth/grant/{client_id}`), then goes
/// back to the authorization endpoint with `g_continue`, which answers with the redirect to the client.
struct GlewlwydUserAgent: Sendable {
    let baseURL: URL

    /// Returns the authorization endpoint's final redirect (to the client's callback), never requesting it.
    func signIn(username: String, password: String, authorizationURL: URL) async throws -> URL {
        let session = try await GlewlwydSession.signIn(baseURL: baseURL, username: username, password: password)
        // The authorization endpoint first sends the browser to the login page, with what to approve and where to go
        // back to.
        let first = try await session.send("GET", url: authorizationURL)
        guard first.status == 302, let location = first.headers["location"],
            let login = URLComponents(string: location), login.path.hasSuffix("login.html"),
            let callback = login.queryItems?.first(where: { $0.name == "callback_url" })?.value,
            let clientId = login.queryItems?.first(where: { $0.name == "client_id" })?.value
        else {
            return try redirect(first, from: "the authorization endpoint")
        }
        // The query is form-encoded: `+` is a space (URLComponents leaves it as it is).
        let scope = (login.queryItems?.first { $0.name == "scope" }?.value ?? "openid")
            .replacingOccurrences(of: "+", with: " ")
        try await session.expectOK("PUT", "api/auth/grant/\(clientId)", json: ["scope": scope])
        guard let back = URL(string: callback + (callback.contains("?") ? "&g_continue" : "?g_continue")) else {
            throw GlewlwydError.loginFailed("the login page's callback_url is not a URL")
        }
        return try redirect(try await session.send("GET", url: back), from: "the authorization endpoint (g_continue)")
    }

    private func redirect(_ response: HTTPResponse, from what: String) throws -> URL {
        guard response.status == 302, let location = response.headers["location"], let url = URL(string: location)
        else {
            throw GlewlwydError.loginFailed("\(what) answered HTTP \(response.status) without a redirect")
        }
        return url
    }
}
