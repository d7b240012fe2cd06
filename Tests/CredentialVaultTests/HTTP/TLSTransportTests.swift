import Foundation
import KeyServiceMock
import NIOSSL
import Testing
import VaultTestSupport

@testable import CredentialVault

/// The default transport over https, the way users run it: a private authority given as trust roots, the answer
/// cap holding while streaming, IPv6 literals, certificate failures in words, and a CONNECT proxy from the
/// environment.
@Suite("https through the default transport")
struct TLSTransportTests {
    private static func get(
        _ url: URL,
        trustRoots: TrustRoots?,
        proxies: [String: String] = [:],
        limit: Int = HTTPRequest.defaultMaximumAnswerSize
    ) async throws(TransportError) -> CredentialVault.HTTPResponse {
        try await AsyncHTTPClientTransport(trustRoots: trustRoots, proxies: ProxyEnvironment(environment: proxies))
            .send(HTTPRequest(method: "GET", url: url, timeout: 30, maximumAnswerSize: limit))
    }

    @Test("a server signed by a private authority is reached once the authority is given as trust roots")
    func privateAuthority() async throws {
        try await TLSTestServer.with { server in
            let answer = try await Self.get(
                server.baseURL.appending(path: "hello"),
                trustRoots: try TestTLS.trustRoots()
            )
            #expect(answer.status == 200)
            #expect(answer.body == Data("hello".utf8))
        }
    }

    @Test("without the authority the certificate is refused: certificateNotTrusted, never sent, in words")
    func untrusted() async throws {
        try await TLSTestServer.with { server in
            let error = await #expect(throws: TransportError.self) {
                _ = try await Self.get(server.baseURL.appending(path: "hello"), trustRoots: nil)
            }
            #expect(error?.kind == .certificateNotTrusted)
            #expect(error?.wasNeverSent == true)
            #expect(error?.reason.hasPrefix("the certificate of 127.0.0.1 is not trusted (") == true)
        }
    }

    @Test("pinned trust roots of another authority refuse the server")
    func pinnedElsewhere() async throws {
        let other = try TestCertificateAuthority(name: "another test CA")
        try await TLSTestServer.with { server in
            let error = await #expect(throws: TransportError.self) {
                _ = try await Self.get(
                    server.baseURL.appending(path: "hello"),
                    trustRoots: try TrustRoots(pem: other.certificatePEM, onlyThese: true)
                )
            }
            #expect(error?.kind == .certificateNotTrusted)
        }
    }

    /// The server test above would pass with pinning ignored too (the other authority alone, or with the system's,
    /// does not sign the server), and no test can make the system trust a test server: so the rule is read where it
    /// is made, in the client's TLS configuration.
    @Test("pinned trust roots replace the system's; extra ones are added to them")
    func pinningReplacesSystemRoots() throws {
        let pem = TestCertificateAuthority.shared.certificatePEM
        let pinned = try AsyncHTTPClientTransport.tlsConfiguration(
            trustRoots: try TrustRoots(pem: pem, onlyThese: true)
        )
        let expected = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
        #expect(pinned.trustRoots == .certificates(expected))
        #expect(pinned.additionalTrustRoots.isEmpty)
        let extra = try AsyncHTTPClientTransport.tlsConfiguration(trustRoots: try TrustRoots(pem: pem))
        #expect(extra.trustRoots == .default)
        #expect(extra.additionalTrustRoots == [.certificates(expected)])
        let none = try AsyncHTTPClientTransport.tlsConfiguration(trustRoots: nil)
        #expect(none.trustRoots == .default)
        #expect(none.additionalTrustRoots.isEmpty)
    }

    @Test("https to the IPv6 literal [::1] works")
    func ipv6() async throws {
        try await TLSTestServer.with(host: "::1") { server in
            #expect(server.baseURL.absoluteString.hasPrefix("https://[::1]:"))
            let answer = try await Self.get(
                server.baseURL.appending(path: "hello"),
                trustRoots: try TestTLS.trustRoots()
            )
            #expect(answer.body == Data("hello".utf8))
        }
    }

    /// The bytes are counted by a relay in front of the server (the logging proxy), which passes on only what the
    /// client's socket takes: what the client read, plus the socket buffers.
    @Test("a 200 MiB https answer with the 1 MiB cap is refused while streaming: little of it is ever read")
    func capWhileStreaming() async throws {
        try await TLSTestServer.with { server in
            try await ConnectProxy.with { relay in
                let port = try #require(server.baseURL.port)
                let url = try #require(URL(string: "https://issuer.vault-test.example:\(port)/big"))
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Self.get(
                        url,
                        trustRoots: try TestTLS.trustRoots(),
                        proxies: ["HTTPS_PROXY": "http://127.0.0.1:\(relay.port)"]
                    )
                }
                #expect(error?.kind == .answerTooLarge)
                #expect(relay.bytesToClients > 1 << 20)
                #expect(relay.bytesToClients < 16 << 20)
            }
        }
    }

    @Test("HTTPS_PROXY sends https through a CONNECT proxy, with the URL's credentials; NO_PROXY goes around it")
    func connectProxy() async throws {
        try await TLSTestServer.with { server in
            try await ConnectProxy.with { proxy in
                let port = try #require(server.baseURL.port)
                let url = try #require(URL(string: "https://issuer.vault-test.example:\(port)/hello"))
                let proxied = try await Self.get(
                    url,
                    trustRoots: try TestTLS.trustRoots(),
                    proxies: ["HTTPS_PROXY": "http://alice:s%40cret@127.0.0.1:\(proxy.port)"]
                )
                #expect(proxied.body == Data("hello".utf8))
                // "alice:s@cret" in base64 (RFC 7617 Basic).
                #expect(
                    proxy.log == [
                        .init(target: "issuer.vault-test.example:\(port)", authorization: "Basic YWxpY2U6c0BjcmV0")
                    ]
                )

                let error = await #expect(throws: TransportError.self) {
                    _ = try await Self.get(
                        url,
                        trustRoots: try TestTLS.trustRoots(),
                        proxies: ["HTTPS_PROXY": "http://127.0.0.1:\(proxy.port)", "NO_PROXY": ".vault-test.example"]
                    )
                }
                // Direct, the made-up name resolves nowhere: never sent, and the proxy saw nothing more.
                #expect(error?.kind == .notConnected)
                #expect(proxy.log.count == 1)

                let loopback = try await Self.get(
                    server.baseURL.appending(path: "hello"),
                    trustRoots: try TestTLS.trustRoots(),
                    proxies: ["HTTPS_PROXY": "http://127.0.0.1:\(proxy.port)"]
                )
                #expect(loopback.status == 200)
                #expect(proxy.log.count == 1)
            }
        }
    }

    @Test("a CA file that cannot be read or holds no certificate is a configuration error that names it")
    func badCAFile() throws {
        let missing = "/nonexistent/ca-\(UUID().uuidString).pem"
        let unreadable = #expect(throws: VaultError.self) { try TrustRoots(pemFile: missing) }
        #expect(unreadable?.isConfigurationError == true)
        #expect(unreadable?.description.contains(missing) == true)
        #expect(unreadable?.description.contains("cannot be read") == true)

        let garbage = FileManager.default.temporaryDirectory.appending(path: "not-a-ca-\(UUID().uuidString).pem")
        try Data("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n".utf8)
            .write(to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        let unparsable = #expect(throws: VaultError.self) { try TrustRoots(pemFile: garbage.path) }
        #expect(unparsable?.isConfigurationError == true)
        #expect(unparsable?.description.contains("does not parse") == true)

        let empty = #expect(throws: VaultError.self) { try TrustRoots(pem: "no certificate here") }
        #expect(empty?.description.contains("holds no PEM certificate") == true)
    }

    @Test("a vault whose configuration trusts the authority logs in over https; one that does not is told why")
    func vaultTrustRoots() async throws {
        try await AuthFixture.with { fixture in
            #expect(fixture.server.issuer.scheme == "https")
            let vault = try Vault(configuration: fixture.configuration)
            _ = try await vault.auth.metadata()

            var untrusting = fixture.configuration
            untrusting.trustRoots = nil
            let error = await #expect(throws: VaultError.self) {
                _ = try await Vault(configuration: untrusting).auth.metadata()
            }
            #expect(error?.isNetworkError == true)
            #expect(error?.description.contains("the certificate of 127.0.0.1 is not trusted") == true)
        }
    }

    @Test("plain http to a loopback literal still works: login and token over http")
    func plainLoopback() async throws {
        try await AuthFixture.with(tls: false) { fixture in
            #expect(fixture.server.issuer.scheme == "http")
            let userId = try await fixture.register()
            _ = try await fixture.vault.auth.loginWithPassword(userId: userId, password: AuthFixture.password)
            _ = try await fixture.vault.auth.getAccessToken()
        }
    }
}
