import Foundation
import VaultTestSupport

/// Debian's nginx in front of key-service instances, with the operator page's sample configuration
/// (KeyService/nginx/keyservice.conf) filled in: a free port of 127.0.0.1, an upstream of the given instances,
/// its pid, logs and temporary files in a temporary directory, `daemon off`.
///
/// The process itself is a ``NginxProcess`` (VaultTestSupport): a watchdog shell stops it by its PID when this
/// process's pipe to it ends; ``with(upstreams:_:)`` stops it by the PID in its pid file and waits.
final class NginxServer: Sendable {
    private let nginx: NginxProcess

    /// The port nginx listens at on 127.0.0.1.
    var port: Int { nginx.port }
    /// The temporary directory of its configuration, pid file and logs.
    var directory: URL { nginx.directory }

    private init(nginx: NginxProcess) {
        self.nginx = nginx
    }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The sample configuration, as the repository holds it.
    static let templateURL = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "nginx/keyservice.conf")

    /// Runs `body` with nginx proxying to the instances at `upstreams` (ports on 127.0.0.1); stops it by PID
    /// however `body` ends.
    /// - Throws: ``HarnessError`` when nginx is not installed or does not start; whatever `body` throws.
    static func with<Result>(upstreams: [Int], _ body: (NginxServer) async throws -> Result) async throws -> Result {
        let server: NginxServer
        do {
            let port = Int(try FreePort.pick())
            server = NginxServer(
                nginx: try await NginxProcess.start(port: port) { directory in
                    try configuration(upstreams: upstreams, port: port, directory: directory)
                }
            )
        } catch let failure as NginxProcess.Failure {
            throw HarnessError(failure.description)
        }
        do {
            let result = try await body(server)
            server.nginx.stop()
            return result
        } catch {
            server.nginx.stop()
            throw error
        }
    }

    /// The configuration for `upstreams`, listening at `port`, with its files in `directory`.
    static func configuration(upstreams: [Int], port: Int, directory: URL) throws -> String {
        let template = try String(contentsOf: templateURL, encoding: .utf8)
        let servers = upstreams.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=2s;" }
            .joined(separator: "\n        ")
        return template.replacingOccurrences(of: "@LISTEN@", with: "127.0.0.1:\(port)")
            .replacingOccurrences(of: "@SERVERS@", with: servers)
            .replacingOccurrences(of: "@RUNTIME@", with: directory.path)
            .replacingOccurrences(of: "@LOGS@", with: directory.path)
    }
}
