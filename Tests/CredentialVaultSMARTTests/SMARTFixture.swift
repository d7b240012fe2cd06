import CredentialVault
import CredentialVaultSMART
import Foundation
import KeyServiceMock
import Synchronization
import Testing

/// A transport that counts requests by path suffix and can run a step after an answer (to move a clock between
/// two pages of a search).
final class ObservingTransport: HTTPTransport {
    private let inner = TestTLS.transport()
    private let counts = Mutex<[String: Int]>([:])
    private let afterAnswer = Mutex<(@Sendable (HTTPRequest) -> Void)?>(nil)

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let response = try await inner.send(request)
        counts.withLock { $0[request.url.path(), default: 0] += 1 }
        afterAnswer.withLock { $0 }?(request)
        return response
    }

    func count(endingWith suffix: String) -> Int {
        counts.withLock { $0.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    func afterEachAnswer(_ step: (@Sendable (HTTPRequest) -> Void)?) {
        afterAnswer.withLock { $0 = step }
    }
}

/// KeyServiceMock in its SMART mode, a store, and SMART clients over them; the server and the client each have a
/// clock of their own, so a test can expire a token at the server only.
struct SMARTFixture {
    static let password = "smart fixture password"
    static let standaloneScopes = ["launch/patient", "openid", "fhirUser", "offline_access", "patient/*.rs"]

    let server: KeyServiceMockServer
    let serverClock: ManualClock
    let clientClock: ManualClock
    let root: URL
    let transport: ObservingTransport
    let configuration: VaultConfiguration

    static func with<Result>(
        smart: SMARTMode = SMARTMode(),
        scopes: [String] = standaloneScopes,
        dynamicRegistration: Bool = false,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (SMARTFixture) async throws -> Result
    ) async throws -> Result {
        let serverClock = ManualClock()
        let clientClock = ManualClock()
        var mock = KeyServiceMockConfiguration()
        mock.now = serverClock.dateProvider
        mock.smart = smart
        mock.dynamicRegistration = dynamicRegistration
        // Served over https with the test authority, which the vault trusts through its configuration.
        mock.tls = try TestTLS.server()
        return try await KeyServiceMockServer.withServer(mock) { server in
            let root = URL(fileURLWithPath: NSTemporaryDirectory()).appending(path: "smart-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            var configuration = VaultConfiguration(
                issuer: server.issuer,
                clientId: "vault",
                scopes: scopes,
                keyServiceURL: server.keyServiceURL,
                storeDirectory: root.appending(path: "store"),
                requestTimeout: 60,
                // OWASP's floor (2 passes over 19 MiB): the cheapest cost the vault accepts.
                opsLimit: 2,
                memLimitBytes: 19 << 20,
                now: clientClock.dateProvider,
                monotonicNow: clientClock.instantProvider
            )
            configuration.trustRoots = try TestTLS.trustRoots()
            let fixture = SMARTFixture(
                server: server,
                serverClock: serverClock,
                clientClock: clientClock,
                root: root,
                transport: ObservingTransport(),
                configuration: configuration
            )
            return try await body(fixture)
        }
    }

    /// A new client, as an app process that starts.
    func client(allowsServerWithoutS256: Bool = false) throws -> SMARTClient {
        try SMARTClient(
            fhirBase: server.fhirBase,
            configuration: configuration,
            allowsServerWithoutS256: allowsServerWithoutS256,
            transport: transport
        )
    }

    /// A new client with no client id, as an app process that starts and registers itself (RFC 7591) as
    /// `registration` says.
    func client(registration: DynamicRegistration) throws -> SMARTClient {
        var configuration = configuration
        configuration.clientId = ""
        configuration.registration = registration
        return try SMARTClient(fhirBase: server.fhirBase, configuration: configuration, transport: transport)
    }

    /// A launch by a new client (EHR when `launch` is given), its login sealed under ``password``.
    func launch(ehr launch: String? = nil, userId: String? = nil) async throws -> (SMARTClient, LaunchContext) {
        let client = try client()
        if let launch { try await client.handleEHRLaunch(iss: server.fhirBase, launch: launch) }
        let context = try await client.authorize(userId: userId) { url in await Browser.follow(url) }
        try await client.vault().auth.storeRefreshToken(withNewPassword: Self.password)
        return (client, context)
    }

    /// A later start of the app: `client` logs in with ``password`` through its vault's ``Auth`` (the one door to the
    /// login), and the launch context that login brought back.
    static func login(_ client: SMARTClient) async throws -> LaunchContext {
        _ = try await client.vault().auth.loginWithPassword(password: password)
        return try #require(await client.launchContext)
    }
}

/// A browser for an authorization server that approves without a page: it follows the redirects.
enum Browser {
    static func follow(_ url: URL, hops: Int = 5) async {
        let transport = TestTLS.transport()
        var next = url
        for _ in 0..<hops {
            guard let response = try? await transport.send(HTTPRequest(method: "GET", url: next, timeout: 60)),
                (300..<400).contains(response.status), let location = response.headers["location"],
                let target = URL(string: location, relativeTo: next)?.absoluteURL
            else { return }
            next = target
        }
    }
}
