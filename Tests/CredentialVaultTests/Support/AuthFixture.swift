import CredentialVault
import Foundation
import KeyServiceMock
import Synchronization
import VaultTestSupport

/// Counts the requests that go through the real default transport, by URL path.
final class CountingTransport: HTTPTransport {
    private let inner: any HTTPTransport
    private let counts = Mutex<[String: Int]>([:])

    /// Over the default transport with `trustRoots` (a configuration's; by default the test authority).
    init(trustRoots: TrustRoots? = try? TestTLS.trustRoots()) {
        inner = DefaultHTTPTransport.make(trustRoots: trustRoots)
    }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        counts.withLock { $0[request.url.path, default: 0] += 1 }
        return try await inner.send(request)
    }

    /// Requests so far whose path ends with `suffix`.
    func count(endingWith suffix: String) -> Int {
        counts.withLock { $0.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }
}

/// KeyServiceMock as key service and issuer (over https with the test authority, unless `tls` is false), on a manual
/// clock shared with the vault, and a Vault over it.
struct AuthFixture {
    let server: KeyServiceMockServer
    let clock: ManualClock
    let root: URL
    let transport: CountingTransport
    let configuration: VaultConfiguration
    let vault: Vault
    /// The test authority's certificate, mode 0600 in ``root``, when the server speaks https: a child process's
    /// `CREDENTIAL_VAULT_CA_FILE`.
    let caFile: URL?

    static let password = "auth fixture password"

    /// Runs `body` against a fresh fixture, and stops the server and removes the store before returning,
    /// whether `body` returns or throws.
    static func with<Result>(
        accessTokenLifetime: TimeInterval = 300,
        leeway: TimeInterval = 60,
        offersRevocation: Bool = true,
        authenticationAge: TimeInterval = 0,
        tls: Bool = true,
        dpop: DPoPMode? = nil,
        deviceFlow: DeviceFlowMode? = nil,
        sleep: (@Sendable (Duration) async throws -> Void)? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AuthFixture) async throws -> Result
    ) async throws -> Result {
        let clock = ManualClock()
        var mock = KeyServiceMockConfiguration()
        if tls { mock.tls = try TestTLS.server() }
        mock.now = clock.dateProvider
        mock.accessTokenLifetime = accessTokenLifetime
        mock.offersRevocation = offersRevocation
        mock.dpop = dpop
        mock.deviceFlow = deviceFlow
        mock.authenticationAge = authenticationAge
        return try await KeyServiceMockServer.withServer(mock) { server in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            var configuration = VaultConfiguration(
                issuer: server.issuer,
                clientId: "vault",
                keyServiceURL: server.keyServiceURL,
                storeDirectory: root.appending(path: "store"),
                leeway: leeway,
                requestTimeout: VaultFixture.requestTimeout,
                opsLimit: VaultFixture.opsLimit,
                memLimitBytes: VaultFixture.memLimitBytes,
                now: clock.dateProvider,
                monotonicNow: clock.instantProvider
            )
            configuration.trustRoots = try TestTLS.trustRoots()
            if let sleep { configuration.sleep = sleep }
            let transport = CountingTransport(trustRoots: configuration.trustRoots)
            let fixture = AuthFixture(
                server: server,
                clock: clock,
                root: root,
                transport: transport,
                configuration: configuration,
                vault: try Vault(configuration: configuration, transport: transport),
                caFile: tls ? try TestCertificateAuthority.shared.writeCertificate(in: root) : nil
            )
            return try await body(fixture)
        }
    }

    /// A second Vault on the same store, issuer and key service: the same app after a restart.
    func restarted() throws -> Vault {
        try Vault(configuration: configuration, transport: transport)
    }

    /// The first login by the code flow, then a password: afterwards a password login works.
    @discardableResult
    func register(password: String = AuthFixture.password) async throws -> String {
        let userId = try await vault.auth.performOpenIDConnectFlow { url in
            await Browser.follow(url)
        }
        try await vault.auth.storeRefreshToken(withNewPassword: password)
        return userId
    }

    /// A raw refresh_token grant, outside the library, to see what the issuer thinks of a token.
    func redeemDirectly(_ refreshToken: String) async throws -> (status: Int, body: String) {
        let response = try await Browser.postForm(
            server.issuer.appending(path: "protocol/openid-connect/token"),
            ["grant_type": "refresh_token", "client_id": "vault", "refresh_token": refreshToken]
        )
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// The store directory's session lock file, which logins and refreshes hold.
    var sessionLockPath: String {
        root.appending(path: "store").standardizedFileURL.path + "/.session.lock"
    }
}

/// Plays the browser for an issuer that approves without a page: follows the authorization URL's
/// redirects, the last of which lands on the library's loopback listener.
enum Browser {
    /// A form POST through the library's transport (no redirects followed).
    static func postForm(
        _ url: URL,
        _ fields: [String: String],
        headers: [String: String] = [:]
    ) async throws -> HTTPResponse {
        let body = fields.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }
        .joined(separator: "&")
        return try await TestTLS.transport().send(
            HTTPRequest(
                method: "POST",
                url: url,
                headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { _, form in form },
                body: Data(body.utf8),
                timeout: 60
            )
        )
    }

    static func follow(_ url: URL, hops: Int = 5) async {
        let transport = TestTLS.transport()
        var next = url
        for _ in 0..<hops {
            guard let response = try? await transport.send(HTTPRequest(method: "GET", url: next, timeout: 60)),
                (300..<400).contains(response.status), let location = response.headers["location"],
                var target = URLComponents(
                    url: URL(string: location, relativeTo: next)?.absoluteURL ?? next,
                    resolvingAgainstBaseURL: false
                )
            else { return }
            // A browser resolves `localhost` itself; the transport sends plain http only to loopback IP literals.
            if target.host == "localhost" { target.host = "127.0.0.1" }
            guard let url = target.url else { return }
            next = url
        }
    }
}
