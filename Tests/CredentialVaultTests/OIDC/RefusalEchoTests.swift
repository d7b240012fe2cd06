import Foundation
import Logging
import Testing

@testable import CredentialVault

/// A bare 400 to a refresh is quoted in the error so a person sees what the issuer said, unless the issuer echoed
/// the request: a refresh token must never reach an error message.
@Suite("a refused refresh never quotes the token back")
struct RefusalEchoTests {
    static let refreshToken = "rt-0123456789abcdef-the-refresh-token-itself"

    private static func refresh(at server: CannedHTTPServer) async -> VaultError? {
        let endpoint = TokenEndpoint(
            endpoint: AuthenticatedEndpoint(
                url: server.baseURL.appending(path: "token"),
                clientId: "app",
                authentication: .none,
                supportedMethods: nil,
                now: { Date() },
                transport: TestTLS.transport(),
                timeout: 30,
                logger: Logger(label: "test")
            )
        )
        do {
            _ = try await endpoint.refresh(refreshToken)
            return nil
        } catch {
            return error
        }
    }

    @Test("an answer that echoes the refresh token is not quoted")
    func echoed() async throws {
        let body = Data("bad request: refresh_token=\(Self.refreshToken.prefix(30)) is not valid".utf8)
        try await CannedHTTPServer.with(.fixed(status: 400, body: body)) { server in
            let error = try #require(await Self.refresh(at: server))
            #expect(error.isLoginExpired)
            #expect(!error.description.contains("rt-0123456789abcd"))
        }
    }

    @Test("an answer that does not echo it is quoted")
    func quoted() async throws {
        try await CannedHTTPServer.with(.fixed(status: 400, body: Data("token family revoked".utf8))) { server in
            let error = try #require(await Self.refresh(at: server))
            #expect(error.isLoginExpired)
            #expect(error.description.contains("token family revoked"))
        }
    }
}
