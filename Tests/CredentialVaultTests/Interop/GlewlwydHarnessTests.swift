import CredentialVault
import Foundation
import Synchronization
import Testing
import VaultTestSupport

/// The glewlwyd harness itself: the server it starts is the one the DPoP and device-grant suites need, and nothing of
/// it is left when it stops.
@Suite("glewlwyd harness (interop)", .serialized)
struct GlewlwydHarnessTests {
    @Test("discovery over https lists DPoP (ES256) and the device endpoint; stop leaves no server and no directory")
    func startAndStop() async throws {
        let glewlwyd = try await Glewlwyd.start()
        let directory = glewlwyd.directory
        let discovery: HTTPResponse
        do {
            discovery = try await TestTLS.transport().send(
                HTTPRequest(
                    method: "GET",
                    url: glewlwyd.issuer.appending(path: ".well-known/openid-configuration"),
                    timeout: 60
                )
            )
        } catch {
            glewlwyd.stop()
            throw error
        }
        glewlwyd.stop()
        #expect(discovery.status == 200)
        let metadata = try #require(try JSONSerialization.jsonObject(with: discovery.body) as? [String: Any])
        #expect(metadata["issuer"] as? String == glewlwyd.issuer.absoluteString)
        #expect(metadata["token_endpoint"] as? String == glewlwyd.tokenEndpoint.absoluteString)
        #expect((metadata["dpop_signing_alg_values_supported"] as? [String])?.contains("ES256") == true)
        #expect(
            metadata["device_authorization_endpoint"] as? String
                == glewlwyd.issuer.appending(path: "device_authorization").absoluteString
        )
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // Nothing answers at the address any more.
        await #expect(throws: (any Error).self) {
            try await TestTLS.transport().send(HTTPRequest(method: "GET", url: glewlwyd.issuer, timeout: 60))
        }
    }

    @Test("a failing test still stops the server: Glewlwyd.with stops it when the body throws")
    func stopsWhenTheBodyThrows() async throws {
        struct Planned: Error {}
        let seen = Mutex<URL?>(nil)
        await #expect(throws: Planned.self) {
            try await Glewlwyd.with { glewlwyd in
                seen.withLock { $0 = glewlwyd.directory }
                throw Planned()
            }
        }
        let directory = try #require(seen.withLock { $0 })
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
}
