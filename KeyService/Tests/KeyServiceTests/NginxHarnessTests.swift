import Foundation
import Testing
import VaultTestSupport

/// The nginx the multi-instance tests put in front: the operator page's sample configuration, filled in.
@Suite("nginx from the sample configuration")
struct NginxHarnessTests {
    @Test("every field of the sample is filled in, and the upstream lists each instance")
    func filledIn() throws {
        let text = try NginxServer.configuration(
            upstreams: [20_001, 20_002],
            port: 20_000,
            directory: URL(filePath: "/tmp/x")
        )
        #expect(!text.contains("@"))
        // Each instance on a line of its own, none of them inside a comment.
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains { $0.hasPrefix("server 127.0.0.1:20001 ") })
        #expect(lines.contains { $0.hasPrefix("server 127.0.0.1:20002 ") })
        #expect(text.contains("listen 127.0.0.1:20000;"))
    }

    @Test("nginx starts on a free port, answers 502 for an instance that is down, and is gone after the scope")
    func startsAndStops() async throws {
        let down = Int(try FreePort.pick())
        let pidFile = try await NginxServer.with(upstreams: [down]) { nginx in
            let url = try #require(URL(string: nginx.baseURL + "/keyservice/v1/key"))
            #expect(try await HTTPClient().post(url, json: [:]).status == 502)
            return nginx.directory.appending(path: "nginx.pid")
        }
        // The scope removed its directory after nginx exited; no master is left listening on the port.
        #expect(!FileManager.default.fileExists(atPath: pidFile.path))
    }
}
