import CredentialVault
import Foundation

/// glewlwyd's admin REST API, as its admin page calls it, in the session of the `admin` user the package's schema
/// creates (password `password`, glewlwyd's documented default).
struct GlewlwydAdmin: Sendable {
    let session: GlewlwydSession

    static func signIn(baseURL: URL) async throws -> GlewlwydAdmin {
        GlewlwydAdmin(
            session: try await GlewlwydSession.signIn(baseURL: baseURL, username: "admin", password: "password")
        )
    }

    /// The parameters glewlwyd 2.7.5's admin page fills in for a new OpenID Connect plugin instance: its object of
    /// defaults in `/usr/share/glewlwyd/webapp/admin.js`, kept as JSON in `Tests/Interop/glewlwyd/`.
    static func pluginDefaults() throws -> [String: Any] {
        let data = try Data(contentsOf: GlewlwydPaths.interop.appending(path: "oidc-plugin-defaults.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw GlewlwydError.setupFailed("oidc-plugin-defaults.json is not a JSON object", log: "")
        }
        return object
    }

    /// Adds an enabled OpenID Connect plugin instance (`POST /api/mod/plugin/`); its endpoints live under
    /// `/api/{name}`.
    func addPlugin(name: String, parameters: [String: Any]) async throws {
        try await session.expectOK(
            "POST",
            "api/mod/plugin/",
            json: [
                "module": "oidc", "name": name, "display_name": "OpenID Connect", "enabled": true,
                "parameters": parameters,
            ] as [String: Any]
        )
    }

    /// Adds an enabled user with a password and the scopes it may be granted (`POST /api/user/`).
    func addUser(username: String, password: String, scopes: [String]) async throws {
        try await session.expectOK(
            "POST",
            "api/user/",
            json: [
                "username": username, "name": username, "password": password, "enabled": true, "scope": scopes,
            ] as [String: Any]
        )
    }

    /// Adds an enabled public client with one redirect URI (`POST /api/client/`); `extra` are further properties
    /// (strings, as the client database stores them).
    func addPublicClient(id: String, redirectURI: URL, grants: [String], extra: [String: String] = [:]) async throws {
        var client: [String: Any] = [
            "client_id": id, "name": id, "confidential": false, "enabled": true,
            "redirect_uri": [redirectURI.absoluteString], "authorization_type": grants, "scope": [String](),
        ]
        for (key, value) in extra { client[key] = value }
        try await session.expectOK("POST", "api/client/", json: client)
    }

    /// Waits (up to 10 s) until the plugin's discovery document answers 200.
    func waitForDiscovery(issuer: URL) async throws {
        let url = issuer.appending(path: ".well-known/openid-configuration")
        let deadline = ContinuousClock.now + .seconds(10)
        var status = 0
        while ContinuousClock.now < deadline {
            status = (try? await session.send("GET", url: url).status) ?? 0
            if status == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw GlewlwydError.adminRequestFailed("its discovery document", status: status, body: "")
    }
}
