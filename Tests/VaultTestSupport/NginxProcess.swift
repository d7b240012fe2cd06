public import Foundation
import VaultPOSIX

/// Debian's nginx, run by a test from a configuration it generates: on a port of 127.0.0.1, with its configuration,
/// pid file, logs and temporary files in a temporary directory of its own, `daemon off`, no path owned by root
/// needed.
///
/// It runs under a watchdog shell that stops it by its PID (SIGTERM) when this process's pipe to it ends, so no
/// nginx outlives a crashed test run; ``stop()`` stops it by the PID in its pid file and waits.
public final class NginxProcess: Sendable {
    /// The port nginx listens at on 127.0.0.1.
    public let port: Int
    /// The temporary directory of its configuration, pid file and logs (removed by ``stop()``).
    public let directory: URL
    private let process: TestProcess

    /// Where Debian installs nginx.
    public static let binary = "/usr/sbin/nginx"

    private init(port: Int, directory: URL, process: TestProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// Starts nginx on `port` with the configuration `configuration` returns for a new temporary directory (which
    /// it may fill with files the configuration names: certificates, keys); returns once nginx listens there.
    ///
    /// The configuration must not set `daemon`, `pid` or `error_log`: they are given on the command line
    /// (`-g 'daemon off; pid DIR/nginx.pid; error_log DIR/error.log;'`).
    /// - Throws: ``Failure`` when nginx is not installed or does not start within 30 s (with its error log);
    ///   whatever `configuration` throws.
    public static func start(port: Int, configuration: (URL) throws -> String) async throws -> NginxProcess {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw Failure(
                description: "nginx is not installed (no \(binary)): apt-get install -y nginx (make test-deps "
                    + "installs it); the suites that need it fail without it, they do not skip"
            )
        }
        let directory = FileManager.default.temporaryDirectory.appending(path: "test-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // nginx's workers (nobody, when the tests run as root) must reach the temporary files' directories.
        chmod(directory.path, 0o755)
        let configurationURL = directory.appending(path: "nginx.conf")
        let text: String
        do {
            text = try configuration(directory)
            try text.write(to: configurationURL, atomically: true, encoding: .utf8)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
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
        let server = NginxProcess(port: port, directory: directory, process: process)
        if try await process.waitUntilListening(
            port: UInt16(port),
            ready: { FileManager.default.fileExists(atPath: pidFile) }
        ) {
            return server
        }
        let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        server.stop()
        throw Failure(description: "nginx did not start on port \(port): \(log)")
    }

    /// Stops nginx by the PID in its pid file (fast shutdown) and waits for it, SIGKILL to its group after 30 s;
    /// removes its directory. Blocks the calling thread for as long (usually a few milliseconds), so that a `defer`
    /// can call it; calling it again does nothing harmful.
    public func stop() {
        let pidFile = directory.appending(path: "nginx.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGTERM)
        }
        process.closeInput()
        let deadline = ContinuousClock.now + .seconds(30)
        while process.termination == nil && ContinuousClock.now < deadline { usleep(10_000) }
        if process.termination == nil { process.killGroup() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// nginx could not be started; the description says why and what to install.
    public struct Failure: Error, CustomStringConvertible {
        /// Why.
        public let description: String
    }
}
