import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Listening: on loopback only, unless asked")
struct LoopbackHostTests {
    let http = HTTPClient()

    @Test(
        "a host that is not a loopback address, parsed as one, is refused at start",
        arguments: [
            "0.0.0.0", "::", "192.0.2.1", "10.0.0.1", "localhost", "127.0.0.1.nip.io", "127.1", "::ffff:127.0.0.1",
            "::2", "example.com", "",
        ]
    )
    func refused(host: String) async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.host = host
        let error = await #expect(throws: KeyServiceMockError.self) {
            try await KeyServiceMockServer.withServer(configuration) { _ in
                Issue.record("the server started on \(host)")
            }
        }
        #expect(error?.description.contains("is not a loopback address (127.0.0.0/8 or ::1)") == true)
        #expect(error?.description.contains("allowsNonLoopbackHost") == true)
    }

    @Test(
        "a loopback address starts and answers",
        arguments: ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1"]
    )
    func accepted(host: String) async throws {
        var configuration = KeyServiceMockConfiguration()
        configuration.host = host
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            #expect(try await calls.createKey(secret: "s").status == 200)
        }
    }

    @Test("allowsNonLoopbackHost lets the server listen on every address, with a warning")
    func allowed() async throws {
        let capture = LogCapture()
        var configuration = KeyServiceMockConfiguration()
        configuration.host = "0.0.0.0"
        configuration.allowsNonLoopbackHost = true
        configuration.logger = capture.logger(level: .warning)
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            #expect(server.baseURL.host == "0.0.0.0")
            let port = try #require(server.baseURL.port)
            let reachable = try #require(URL(string: "http://127.0.0.1:\(port)/auth/realms/demo/keyservice/v1"))
            #expect(try await KeyServiceCalls(base: reachable, http: http).createKey(secret: "s").status == 200)
        }
        let warnings = capture.lines.filter { $0.level == .warning }
        #expect(warnings.map(\.message).contains { $0.hasPrefix("listening on an address that is not loopback") })
    }

    @Test("the default is loopback, and no opt-in")
    func defaults() {
        let configuration = KeyServiceMockConfiguration()
        #expect(configuration.host == "127.0.0.1")
        #expect(!configuration.allowsNonLoopbackHost)
    }

    @Test("keyservice-mock refuses a --host that is not loopback unless --allow-non-loopback is given")
    func executable() async throws {
        let refused = try await MockProcess.run(["--host", "0.0.0.0"])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("the host 0.0.0.0 is not a loopback address"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--allow-non-loopback"))

        let allowed = try await MockProcess.launch(["--host", "0.0.0.0", "--allow-non-loopback"])
        defer { allowed.signal(SIGKILL) }
        #expect(allowed.readyLine.hasPrefix("keyservice-mock listening on http://0.0.0.0:"))
    }
}
