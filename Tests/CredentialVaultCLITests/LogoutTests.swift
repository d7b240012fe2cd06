import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `credential-vault logout` against issuers that do not revoke: the login ends here all the same, the last line says
/// what the issuer did, and `token` afterwards is refused without a request to the token endpoint.
@Suite(
    "credential-vault logout: the login ends here whatever the issuer answers, and it says what the issuer did",
    .tags(.cli)
)
struct LogoutTests {
    static let password = "correct horse"

    @Test("an issuer that refuses to revoke: logout exits 0 naming the refusal, and token then fails with no request")
    func refused() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await AgentTests.register(sandbox)
            sandbox.server?.faults.set(.internalServerError, for: .revocationEndpoint)
            let logout = try await sandbox.run(["logout", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(logout.status == 0, "\(logout.status): \(logout.stderr)")
            #expect(logout.stdout.contains("Logged out demo-user"), "\(logout.stdout)")
            #expect(logout.stdout.contains("refused to revoke"), "\(logout.stdout)")
            #expect(logout.stdout.contains("server_error"), "the issuer's own words: \(logout.stdout)")
            try await Self.expectLoggedOut(sandbox, log)
        }
    }

    @Test("an issuer with no revocation endpoint: logout exits 0 saying so, and token then fails with no request")
    func notOffered() async throws {
        let log = RequestLog()
        var configuration = KeyServiceMockConfiguration()
        configuration.offersRevocation = false
        try await withSandbox(server: log.configuration(configuration)) { sandbox in
            try await AgentTests.register(sandbox)
            let logout = try await sandbox.run(["logout", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(logout.status == 0, "\(logout.status): \(logout.stderr)")
            #expect(logout.stdout.contains("no revocation endpoint"), "\(logout.stdout)")
            try await Self.expectLoggedOut(sandbox, log)
        }
    }

    @Test("an issuer that revokes: logout says so; the user stays listed and --clear-user --local-only removes it")
    func revoked() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await AgentTests.register(sandbox)
            let logout = try await sandbox.run(["logout", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(logout.status == 0, "\(logout.status): \(logout.stderr)")
            #expect(logout.stdout.contains("the issuer revoked it"), "\(logout.stdout)")
            try await Self.expectLoggedOut(sandbox, log)
            let status = try await sandbox.run(["status"])
            #expect(status.stdout.contains("demo-user"), "the user stays listed: \(status.stdout)\(status.stderr)")
            let clear = try await sandbox.run(["logout", "--clear-user", "--local-only"])
            #expect(clear.status == 0, "\(clear.stderr)")
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") })
        }
    }

    @Test("end_session_endpoint: logout in a new process notes the URL with the login's id_token_hint and redirect")
    func endSession() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await AgentTests.register(sandbox)
            let logout = try await sandbox.run(
                ["logout", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: ["CREDENTIAL_VAULT_POST_LOGOUT_REDIRECT_URI": "http://127.0.0.1/callback"]
            )
            #expect(logout.status == 0, "\(logout.status): \(logout.stderr)")
            #expect(logout.stdout.contains("the issuer revoked it"), "\(logout.stdout)")
            let line = try #require(
                logout.stderr.split(separator: "\n").first { $0.contains("browser session") },
                "\(logout.stderr)"
            )
            let url = try #require(line.split(separator: " ").last.flatMap { URL(string: String($0)) })
            #expect(url.path().hasSuffix("/protocol/openid-connect/logout"), "\(url)")
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            #expect(items.first { $0.name == "client_id" }?.value == "vault")
            #expect(items.first { $0.name == "post_logout_redirect_uri" }?.value == "http://127.0.0.1/callback")
            // The login's latest id token (sealed with it; this process's unlock refreshed it) is the hint.
            let latest = try #require(sandbox.server?.authentication.lastIDToken)
            #expect(items.first { $0.name == "id_token_hint" }?.value == latest)
            #expect(!logout.stdout.contains(latest), "the id token is only in the note's URL")
        }
    }

    /// `token` (and `login`) after logout: "no login is stored", exit 67, no password asked, no token request.
    private static func expectLoggedOut(_ sandbox: CLISandbox, _ log: RequestLog) async throws {
        let before = log.tokenRequests
        let token = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
        #expect(token.status == 67, "\(token.status): \(token.stdout)\(token.stderr)")
        #expect(token.stdout.isEmpty)
        #expect(token.stderr.contains("no login is stored for demo-user"), "\(token.stderr)")
        #expect(token.stderr.contains("credential-vault register"), "\(token.stderr)")
        let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
        #expect(login.status == 67, "\(login.stderr)")
        #expect(log.tokenRequests == before, "no request reached the token endpoint")
    }
}
