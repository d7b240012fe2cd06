import Foundation
import Synchronization
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The glewlwyd process of one test, with its temporary directory: configuration, SQLite database, signing key, log.
///
/// It runs under a watchdog shell that stops it (SIGTERM) when this process's pipe to the shell ends, so no glewlwyd
/// outlives a crashed test run (as ``NginxProcess`` does); the shell ends when glewlwyd does, so a glewlwyd that
/// exits at start (a configuration it refuses) is seen at once.
final class GlewlwydProcess: Sendable {
    /// The run's directory (removed by ``stop()``).
    let directory: URL
    /// The RS256 key the plugin signs tokens with, made by `openssl genrsa` as an admin would.
    let signingKey: (privatePEM: String, publicPEM: String)
    private let process: TestProcess
    private let stopped = Mutex(false)

    private var logFile: URL { directory.appending(path: "glewlwyd.log") }

    private init(directory: URL, signingKey: (privatePEM: String, publicPEM: String), process: TestProcess) {
        self.directory = directory
        self.signingKey = signingKey
        self.process = process
    }

    deinit {
        stop()
    }

    /// Builds the database from the package's schema, writes the configuration for `port` and `externalURL`, and
    /// starts glewlwyd; returns once it listens on `port`.
    static func start(port: Int, externalURL: URL) async throws -> GlewlwydProcess {
        let directory = try TemporaryDirectory.make()
        do {
            let database = directory.appending(path: "glewlwyd.db")
            let schema = try await TestProcess.run(["sqlite3", database.path], input: .file(GlewlwydPaths.schema))
            guard schema.termination == .exited(0) else {
                throw GlewlwydError.startFailed("sqlite3 could not load the schema: \(schema.errorText)", log: "")
            }
            let template = try String(
                contentsOf: GlewlwydPaths.interop.appending(path: "glewlwyd.conf"),
                encoding: .utf8
            )
            let configuration = directory.appending(path: "glewlwyd.conf")
            try template.replacingOccurrences(of: "@PORT@", with: String(port))
                .replacingOccurrences(of: "@EXTERNAL_URL@", with: externalURL.absoluteString)
                .replacingOccurrences(of: "@DATABASE@", with: database.path)
                .write(to: configuration, atomically: true, encoding: .utf8)
            let signingKey = try await makeSigningKey(in: directory)
            // A background job's standard input is /dev/null: the pipe is kept as descriptor 3 for the watcher.
            let script = """
                exec 3<&0
                "$1" -c "$2" -m console -l DEBUG </dev/null 3<&- &
                server=$!
                (cat <&3 >/dev/null; kill -TERM "$server" 2>/dev/null) &
                exec 3<&-
                wait "$server"
                """
            let process = try TestProcess(
                ["/bin/sh", "-c", script, "glewlwyd-watchdog", GlewlwydPaths.binary, configuration.path],
                input: .pipe,
                output: .file(directory.appending(path: "glewlwyd.log")),
                error: .sameAsOutput
            )
            let server = GlewlwydProcess(directory: directory, signingKey: signingKey, process: process)
            if try await process.waitUntilListening(port: UInt16(port)) { return server }
            let log = server.logTail()
            server.stop()
            throw GlewlwydError.startFailed("it did not listen on port \(port) within 30 s", log: log)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// An RSA key (2048 bits) and its public half, PEM, by `openssl` as the admin guide does.
    private static func makeSigningKey(in directory: URL) async throws -> (privatePEM: String, publicPEM: String) {
        let key = directory.appending(path: "signing-key.pem")
        let generated = try await TestProcess.run(["openssl", "genrsa", "-out", key.path, "2048"])
        let extracted = try await TestProcess.run(["openssl", "rsa", "-in", key.path, "-pubout"])
        guard generated.termination == .exited(0), extracted.termination == .exited(0) else {
            throw GlewlwydError.startFailed("openssl could not make a key: \(generated.errorText)", log: "")
        }
        return (try String(contentsOf: key, encoding: .utf8), extracted.outputText)
    }

    /// The last 6,000 characters of glewlwyd's log (it logs at DEBUG: each refusal says why).
    func logTail() -> String {
        String(((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").suffix(6000))
    }

    /// Stops glewlwyd (its watchdog's input closes; SIGKILL to the group after 10 s), waits, removes the directory.
    func stop() {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        process.closeInput()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.termination == nil && ContinuousClock.now < deadline { usleep(10_000) }
        if process.termination == nil { process.killGroup() }
        try? FileManager.default.removeItem(at: directory)
    }
}
