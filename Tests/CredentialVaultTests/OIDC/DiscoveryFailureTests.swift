import CredentialVault
import Foundation
import Testing

/// A discovery document the issuer cannot serve now is the server's failure (CLI exit 70), like any other
/// server answer; one that is missing or wrong points at the configuration (CLI exit 78).
@Suite("Discovery failures: server or configuration")
struct DiscoveryFailureTests {
    static func discover(status: Int, body: String = "{}") async throws -> VaultError? {
        try await CannedHTTPServer.with(.fixed(status: status, body: Data(body.utf8))) { server in
            let vault = try server.vault()
            return await #expect(throws: VaultError.self) { _ = try await vault.auth.metadata() }
        }
    }

    @Test("a 5xx or 429 answer is serverRefused, not a configuration error", arguments: [500, 502, 503, 504, 429])
    func serverFailure(status: Int) async throws {
        let error = try await Self.discover(status: status, body: #"{"error":"temporarily_unavailable"}"#)
        #expect(error?.kind == .serverRefused)
        #expect(error?.httpStatus == status)
        #expect(error?.host == "127.0.0.1")
        #expect(error?.isConfigurationError == false)
        #expect(error?.isNetworkError == false)
        #expect(error?.description.contains("HTTP \(status)") == true)
    }

    @Test("a 404 or another client error is discoveryFailed: a configuration error", arguments: [404, 400, 410])
    func missingDocument(status: Int) async throws {
        let error = try await Self.discover(status: status)
        #expect(error?.kind == .discoveryFailed)
        #expect(error?.httpStatus == status)
        #expect(error?.isConfigurationError == true)
    }

    @Test("a 200 that is not a discovery document is discoveryFailed: a configuration error")
    func notADocument() async throws {
        let error = try await Self.discover(status: 200, body: "<html>an app's start page</html>")
        #expect(error?.kind == .discoveryFailed)
        #expect(error?.isConfigurationError == true)
    }

    @Test("a document naming another issuer is discoveryFailed: a configuration error")
    func anotherIssuer() async throws {
        let error = try await Self.discover(
            status: 200,
            body: #"{"issuer":"https://issuer.example","authorization_endpoint":"https://issuer.example/a","#
                + #""token_endpoint":"https://issuer.example/t"}"#
        )
        #expect(error?.kind == .discoveryFailed)
        #expect(error?.isConfigurationError == true)
    }
}
