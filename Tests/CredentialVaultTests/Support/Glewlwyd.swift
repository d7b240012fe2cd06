import CredentialVault
import Foundation
import VaultTestSupport

/// A running glewlwyd 2.7.5 (Debian's `glewlwyd` package) on 127.0.0.1 behind nginx as its TLS front: a real
/// third-party OpenID Connect server with DPoP (RFC 9449, as its draft 07) and the device authorization grant
/// (RFC 8628), reached over https.
///
/// `start` makes a temporary directory with a SQLite database built from the schema the package ships
/// (``GlewlwydPaths/schema``) and a configuration file (`Tests/Interop/glewlwyd/glewlwyd.conf`, Debian's defaults),
/// runs `/usr/bin/glewlwyd` on plain http on a free loopback port with nginx in front of it (``DjangoTLSFront``),
/// and configures it through its admin REST API as an admin would (``GlewlwydAdmin``): an OpenID Connect plugin
/// instance, a user and two public clients. Call `stop()` when done (``with(dpopNonceRequired:_:)`` does); the
/// server also stops when the test process dies (its watchdog's standard input closes).
struct Glewlwyd: Sendable {
    /// `https://127.0.0.1:PORT`: nginx, the address clients use, and glewlwyd's `external_url`.
    let baseURL: URL
    /// `{baseURL}/api/oidc`: the plugin instance's issuer.
    let issuer: URL
    /// `{issuer}/token`, exactly as discovery publishes it (glewlwyd compares a proof's `htu` with it byte for byte).
    var tokenEndpoint: URL { issuer.appending(path: "token") }
    /// The public authorization-code client (PKCE S256); DPoP when the client offers a proof.
    let codeClientId = "vault-code"
    /// A public client that requires DPoP (its `dpop_bound_access_tokens` property).
    let dpopClientId = "vault-dpop"
    /// The one redirect URI both clients have: glewlwyd matches redirect URIs exactly, port included.
    let redirectURI: URL
    let username = "alice"
    let password = "alice-password-1"

    private let server: GlewlwydProcess
    private let front: NginxProcess

    /// Runs `body` with a fresh server, stopped and its directory removed however `body` ends.
    ///
    /// `dpopNonceRequired` turns on the plugin's "DPoP nonce mandatory" option (off by default).
    static func with<Result>(
        dpopNonceRequired: Bool = false,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Glewlwyd) async throws -> Result
    ) async throws -> Result {
        let server = try await start(dpopNonceRequired: dpopNonceRequired)
        defer { server.stop() }
        return try await body(server)
    }

    /// Starts a configured server and returns once its discovery document answers.
    ///
    /// Throws ``GlewlwydError/notInstalled(_:)`` when the package is missing, so the suites fail (not skip) on a
    /// machine that never ran `make test-deps`; ``NginxProcess/Failure`` when nginx is missing.
    static func start(dpopNonceRequired: Bool = false) async throws -> Glewlwyd {
        for path in [GlewlwydPaths.binary, GlewlwydPaths.schema.path]
        where !FileManager.default.fileExists(atPath: path) {
            throw GlewlwydError.notInstalled(path)
        }
        let backend = Int(try FreePort.pick())
        let port = Int(try FreePort.pick())
        let baseURL = URL(string: "https://127.0.0.1:\(port)")!
        let server = try await GlewlwydProcess.start(port: backend, externalURL: baseURL)
        let front: NginxProcess
        do {
            front = try await DjangoTLSFront.start(port: port, upstream: "127.0.0.1:\(backend)").nginx
        } catch {
            server.stop()
            throw error
        }
        let callbackPort = try FreePort.pick()
        let glewlwyd = Glewlwyd(
            baseURL: baseURL,
            issuer: baseURL.appending(path: "api/oidc"),
            redirectURI: URL(string: "http://127.0.0.1:\(callbackPort)/callback")!,
            server: server,
            front: front
        )
        do {
            try await glewlwyd.configure(dpopNonceRequired: dpopNonceRequired, signingKey: server.signingKey)
            return glewlwyd
        } catch {
            glewlwyd.stop()
            throw GlewlwydError.setupFailed("\(error)", log: server.logTail())
        }
    }

    /// What an admin does after installing: signs in as the shipped `admin` (password `password`), adds an
    /// OpenID Connect plugin instance, a user and the clients.
    private func configure(
        dpopNonceRequired: Bool,
        signingKey: (privatePEM: String, publicPEM: String)
    )
        async throws
    {
        let admin = try await GlewlwydAdmin.signIn(baseURL: baseURL)
        var parameters = try GlewlwydAdmin.pluginDefaults()
        // What the admin changes from the admin page's defaults, and why: the issuer and signing key of this
        // instance; PKCE (off by default, and glewlwyd then refuses any request with a code_challenge); DPoP and the
        // device grant, which this suite exists for.
        parameters["iss"] = issuer.absoluteString
        parameters["key"] = signingKey.privatePEM
        parameters["cert"] = signingKey.publicPEM
        parameters["pkce-allowed"] = true
        parameters["oauth-dpop-allowed"] = true
        parameters["oauth-dpop-nonce-mandatory"] = dpopNonceRequired
        parameters["auth-type-device-enabled"] = true
        try await admin.addPlugin(name: "oidc", parameters: parameters)
        try await admin.addUser(username: username, password: password, scopes: ["openid"])
        let grants = ["code", "refresh_token", "device_authorization"]
        try await admin.addPublicClient(id: codeClientId, redirectURI: redirectURI, grants: grants)
        try await admin.addPublicClient(
            id: dpopClientId,
            redirectURI: redirectURI,
            grants: grants,
            extra: ["dpop_bound_access_tokens": "true"]
        )
        try await admin.waitForDiscovery(issuer: issuer)
    }

    /// Signs alice in and approves the client the way glewlwyd's login page does in a browser, then follows
    /// `authorizationURL` to its redirect to the client's callback (with `code` and `state`, or `error`), which it
    /// returns without requesting it.
    func driveLogin(authorizationURL: URL) async throws -> URL {
        try await GlewlwydUserAgent(baseURL: baseURL).signIn(
            username: username,
            password: password,
            authorizationURL: authorizationURL
        )
    }

    /// Stops nginx and glewlwyd and removes glewlwyd's directory; calling it again does nothing.
    func stop() {
        front.stop()
        server.stop()
    }

    /// glewlwyd's directory (configuration, database, log), removed by ``stop()``.
    var directory: URL { server.directory }

    /// The end of glewlwyd's log, for a failing test's message.
    func logTail() -> String { server.logTail() }
}
