import Foundation
import KeyServicePostgres
import Synchronization
import VaultPOSIX
import VaultTestSupport

/// A private PostgreSQL server for one test, from Debian's `postgresql` package: a cluster made by `initdb` in a
/// temporary directory, the server on a free port of 127.0.0.1, a database and a password role for the key service.
///
/// The server runs under a small shell (its watchdog) that reads its standard input, a pipe from this process:
/// when the pipe ends (the test is done, or its process died) the watchdog stops the server by its PID with
/// SIGINT (PostgreSQL's fast shutdown). ``stop()`` also signals the postmaster by the PID in its `postmaster.pid`;
/// the watchdog's process group is killed last, whatever happened. No mock of the database anywhere.
final class PostgresServer: Sendable {
    /// The key service's database and the role that owns it.
    static let database = "keyservice"
    static let role = "keyservice"

    /// The port the server listens at on 127.0.0.1 (kept across ``restart()``).
    let port: Int
    /// The temporary directory holding the cluster, its socket and its log.
    let directory: URL
    private let password: String
    private let binaries: URL
    private let user: ServiceUser
    private let server = Mutex<TestProcess?>(nil)

    private init(port: Int, directory: URL, password: String, binaries: URL, user: ServiceUser) {
        self.port = port
        self.directory = directory
        self.password = password
        self.binaries = binaries
        self.user = user
    }

    /// Runs `body` with a new server running; stops it by PID and removes its directory however `body` ends.
    /// - Throws: ``HarnessError`` when PostgreSQL is not installed or does not start; whatever `body` throws.
    static func with<Result>(_ body: (PostgresServer) async throws -> Result) async throws -> Result {
        let server = try await make()
        do {
            let result = try await body(server)
            await server.stop()
            server.remove()
            return result
        } catch {
            await server.stop()
            server.remove()
            throw error
        }
    }

    /// The URL a key service is given: `postgres://keyservice:…@127.0.0.1:PORT/keyservice?sslmode=disable`.
    var url: String {
        "postgres://\(Self.role):\(password)@127.0.0.1:\(port)/\(Self.database)?sslmode=disable"
    }

    /// The storage configuration for ``url``. Its deadline is long: a hammer's calls queue on one row (or on the
    /// creation lock) on a busy two-core machine; the tests of a stopped server shorten it.
    var configuration: PostgresStorageConfiguration {
        var configuration = PostgresStorageConfiguration(
            host: "127.0.0.1",
            port: port,
            username: Self.role,
            password: password,
            database: Self.database,
            tls: .disable
        )
        configuration.deadline = .seconds(60)
        return configuration
    }

    /// Runs `sql` as the superuser on the key service's database; its rows as `psql -At` prints them.
    /// - Throws: ``HarnessError`` when psql fails.
    func psql(_ sql: String) async throws -> String {
        let done = try await TestProcess.run(
            user.command([
                binaries.appending(path: "psql").path, "-X", "-At", "-v", "ON_ERROR_STOP=1",
                "-h", socketDirectory.path, "-p", String(port), "-U", "postgres", "-d", Self.database, "-c", sql,
            ]),
            environment: environment
        )
        guard done.termination == .exited(0) else {
            throw HarnessError("psql failed (\(done.termination)): \(done.errorText)")
        }
        return done.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the server (fast shutdown, by the postmaster's PID) and waits until it has exited. Does nothing when
    /// it is not running.
    func stop() async {
        guard let process = server.withLock({ $0.take() }) else { return }
        if let pid = postmasterPID() { kill(pid, SIGINT) }
        process.closeInput()
        if await process.wait(timeout: .seconds(60)) == nil { process.killGroup() }
        _ = await process.wait()
    }

    /// Stops the server and starts it again on the same cluster and port (what `pg_ctl restart` does).
    func restart() async throws {
        await stop()
        try await start()
    }

    /// Starts the server on the existing cluster and waits until it accepts connections.
    /// - Throws: ``HarnessError`` with the server's log when it does not come up within a minute.
    func start() async throws {
        // The watchdog: the server in the background (its standard input /dev/null), then wait for the end of this
        // process's pipe and stop the server by its PID.
        let script = """
            "$1" -D "$2" -p "$3" -c listen_addresses=127.0.0.1 -c unix_socket_directories="$4" \
                -c max_connections=400 -c shared_buffers=32MB &
            server=$!
            cat >/dev/null
            kill -INT "$server" 2>/dev/null
            wait "$server"
            """
        let process = try TestProcess(
            user.command([
                "/bin/sh", "-c", script, "postgres-watchdog", binaries.appending(path: "postgres").path,
                dataDirectory.path, String(port), socketDirectory.path,
            ]),
            environment: environment,
            input: .pipe,
            output: .file(directory.appending(path: "postgres-\(UUID().uuidString.prefix(8)).log")),
            error: .sameAsOutput
        )
        server.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if process.termination != nil { break }
            let ready = try await TestProcess.run(
                [binaries.appending(path: "pg_isready").path, "-q", "-h", "127.0.0.1", "-p", String(port)],
                environment: environment
            )
            if ready.termination == .exited(0) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        await stop()
        throw HarnessError("PostgreSQL did not start on port \(port): \(logText())")
    }

    private static func make() async throws -> PostgresServer {
        let binaries = try findBinaries()
        let user = try ServiceUser.forPostgres()
        // Under /tmp when root: the postgres user must be able to reach it, and $TMPDIR may be in root's home.
        let parent = geteuid() == 0 ? URL(filePath: "/tmp") : FileManager.default.temporaryDirectory
        var template = Array(parent.appending(path: "keyservice-pg.XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError(
                "cannot make a temporary directory under \(parent.path): \(String(cString: strerror(errno)))"
            )
        }
        let directory = URL(filePath: String(cString: made))
        try user.own(directory)
        let server = PostgresServer(
            port: Int(try FreePort.pick()),
            directory: directory,
            password: (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined(),
            binaries: binaries,
            user: user
        )
        do {
            try await server.initialize()
            try await server.start()
            try await server.createDatabase()
        } catch {
            await server.stop()
            server.remove()
            throw error
        }
        return server
    }

    private var dataDirectory: URL { directory.appending(path: "data") }
    private var socketDirectory: URL { directory }
    private var environment: [String: String] {
        ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": directory.path]
    }

    private func initialize() async throws {
        let done = try await TestProcess.run(
            user.command([
                binaries.appending(path: "initdb").path, "-D", dataDirectory.path, "-U", "postgres",
                "--auth-local=trust", "--auth-host=scram-sha-256", "--no-locale", "-E", "UTF8", "--no-sync",
                "--no-instructions",
            ]),
            environment: environment,
            mergingError: true
        )
        guard done.termination == .exited(0) else {
            throw HarnessError("initdb failed (\(done.termination)): \(done.outputText)")
        }
    }

    private func createDatabase() async throws {
        for sql in [
            "CREATE ROLE \(Self.role) LOGIN PASSWORD '\(password)'",
            "CREATE DATABASE \(Self.database) OWNER \(Self.role)",
        ] {
            let done = try await TestProcess.run(
                user.command([
                    binaries.appending(path: "psql").path, "-X", "-q", "-v", "ON_ERROR_STOP=1",
                    "-h", socketDirectory.path, "-p", String(port), "-U", "postgres", "-d", "postgres", "-c", sql,
                ]),
                environment: environment,
                mergingError: true
            )
            guard done.termination == .exited(0) else {
                throw HarnessError("psql could not set up the database (\(done.termination)): \(done.outputText)")
            }
        }
    }

    private func postmasterPID() -> pid_t? {
        guard let text = try? String(contentsOf: dataDirectory.appending(path: "postmaster.pid"), encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = pid_t(line)
        else { return nil }
        return pid
    }

    private func logText() -> String {
        let logs = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return logs.filter { $0.lastPathComponent.hasSuffix(".log") }
            .compactMap { try? String(contentsOf: $0, encoding: .utf8) }
            .joined(separator: "\n")
    }

    private func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The newest PostgreSQL's programs: Debian keeps them in /usr/lib/postgresql/VERSION/bin, off the PATH.
    private static func findBinaries() throws -> URL {
        let root = URL(filePath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            let bin = root.appending(path: "\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appending(path: "postgres").path) { return bin }
        }
        throw HarnessError(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres): apt-get install -y postgresql "
                + "(make deps installs it); the PostgreSQL suites fail without it, they do not skip"
        )
    }
}
