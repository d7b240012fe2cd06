import Foundation
import Synchronization
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's nginx in front of key-service instances, with the operator page's sample configuration
/// (KeyService/nginx/keyservice.conf) filled in: a free port of 127.0.0.1, an upstream of the given instances,
/// its pid, logs and temporary files in a temporary directory, `daemon off`.
///
/// Like ``PostgresServer`` it runs under a watchdog shell that stops it by its PID (SIGTERM) when this process's
/// pipe to it ends; ``with(upstreams:_:)`` stops it by the PID in its pid file and waits.
final class NginxServer: Sendable {
    /// The port nginx listens at on 127.0.0.1.
    let port: Int
    /// The temporary directory of its configuration, pid file and logs.
    let directory: URL
    private let process: TestProcess

    private init(port: Int, directory: URL, process: TestProcess) {
        self.port = port
        self.directory = directory
        self.process = process
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
        let server = try await start(upstreams: upstreams)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
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

    private static func start(upstreams: [Int]) async throws -> NginxServer {
        let binary = "/usr/sbin/nginx"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw HarnessError(
                "nginx is not installed (no \(binary)): apt-get install -y nginx (make deps installs it); the "
                    + "multi-instance suites fail without it, they do not skip"
            )
        }
        let directory = FileManager.default.temporaryDirectory.appending(path: "keyservice-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // nginx's workers (nobody, when the tests run as root) must reach the temporary files' directories.
        chmod(directory.path, 0o755)
        let port = Int(try FreePort.pick())
        let configurationURL = directory.appending(path: "nginx.conf")
        try configuration(upstreams: upstreams, port: port, directory: directory)
            .write(to: configurationURL, atomically: true, encoding: .utf8)
        let errorLog = directory.appending(path: "error.log").path
        let pidFile = directory.appending(path: "nginx.pid").path
        let script = """
            "$1" -p "$2" -c "$3" -e "$4" -g "daemon off; pid $5; error_log $4;" &
            server=$!
            cat >/dev/null
            kill -TERM "$server" 2>/dev/null
            wait "$server"
            """
        let process = try TestProcess(
            [
                "/bin/sh", "-c", script, "nginx-watchdog", binary, directory.path, configurationURL.path, errorLog,
                pidFile,
            ],
            input: .pipe,
            output: .file(directory.appending(path: "nginx.out")),
            error: .sameAsOutput
        )
        let server = NginxServer(port: port, directory: directory, process: process)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if process.termination != nil { break }
            if FileManager.default.fileExists(atPath: pidFile), (try? FreePort.Held(port: UInt16(port))) == nil {
                return server
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        await server.stop()
        throw HarnessError("nginx did not start on port \(port): \(log)")
    }

    /// Stops nginx by the PID in its pid file (fast shutdown) and waits for it; removes its directory.
    private func stop() async {
        let pidFile = directory.appending(path: "nginx.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGTERM)
        }
        process.closeInput()
        if await process.wait(timeout: .seconds(30)) == nil { process.killGroup() }
        _ = await process.wait()
        try? FileManager.default.removeItem(at: directory)
    }
}
