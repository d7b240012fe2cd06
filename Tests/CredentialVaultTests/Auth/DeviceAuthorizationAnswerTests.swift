import CredentialVault
import Foundation
import Testing

/// An issuer that answers the device authorization request with `body`, and every token request with
/// `authorization_pending`.
private struct DeviceIssuer: HTTPTransport {
    let body: String

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        if request.url.path.hasSuffix("/device") { return HTTPResponse(status: 200, body: Data(body.utf8)) }
        return HTTPResponse(status: 400, body: Data(#"{"error":"authorization_pending"}"#.utf8))
    }
}

@Suite("device authorization answers a client must not trust")
struct DeviceAuthorizationAnswerTests {
    private static func auth(
        answering body: String,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) throws
        -> Auth
    {
        let issuer = URL(string: "https://id.example")!
        var configuration = VaultConfiguration(
            issuer: issuer,
            clientId: "vault",
            keyServiceURL: issuer.appending(path: "keyservice/v1"),
            storeDirectory: FileManager.default.temporaryDirectory.appending(path: "unused-\(UUID().uuidString)")
        )
        configuration.providerMetadata = try ProviderMetadata(
            issuer: issuer,
            issuerIdentifier: issuer.absoluteString,
            authorizationEndpoint: issuer.appending(path: "auth"),
            tokenEndpoint: issuer.appending(path: "token"),
            deviceAuthorizationEndpoint: issuer.appending(path: "device")
        )
        configuration.sleep = sleep
        return try Vault(configuration: configuration, transport: DeviceIssuer(body: body)).auth
    }

    @Test("a huge interval and a negative expires_in are clamped, never trap: the code is expired before any poll")
    func clamped() async throws {
        let waits = WaitRecorder()
        let shown = DeviceUser()
        let auth = try Self.auth(
            answering: #"{"device_code":"d","user_code":"U","verification_uri":"https://id.example/activate","#
                + #""expires_in":-5,"interval":1e300}"#,
            sleep: waits.sleep
        )
        let error = await #expect(throws: VaultError.self) {
            try await auth.performDeviceAuthorizationFlow { shown.saw($0) }
        }
        #expect(error?.isDeviceCodeExpired == true)
        #expect(shown.authorization?.interval == DeviceAuthorization.maximumInterval)
        #expect(shown.authorization?.expiresIn == 0)
        #expect(waits.recorded.isEmpty)
    }

    @Test("a verification URI that is plain http to another host is refused: the user would type a code there")
    func insecurePage() async throws {
        let auth = try Self.auth(
            answering: #"{"device_code":"d","user_code":"U","verification_uri":"http://evil.example/activate","#
                + #""expires_in":600}"#,
            sleep: { _ in }
        )
        let error = await #expect(throws: VaultError.self) {
            try await auth.performDeviceAuthorizationFlow { _ in }
        }
        #expect(error?.kind == .openIDConnectFailed)
    }
}
