import CredentialVault
import Foundation
import Synchronization
import VaultPOSIX

/// The package's `keyservice-mock` run as a child process on 127.0.0.1, so the `credential-vault` binary links no server
/// stack (Hummingbird, NIO, SQLite) for its embedded default and its demo.
///
/// The executable is the one beside `credential-vault` (both are built into the same directory), else the first on `PATH`.
/// It is started with `posix_spawn` (``ChildProcess``, as `exec` starts a command) with descriptors 0, 1 and 2 only.
/// The child stops when ``stop()`` sends it SIGTERM (SIGKILL after five seconds), and on its own when its
/// standard input closes, so a `credential-vault` that is killed leaves no server behind.
final class KeyServiceMockProcess: Sendable {
    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    /// `{baseURL}/auth/realms/{realm}`.
    let issuer: URL
    /// `{issuer}/keyservice/v1`.
    let keyServiceURL: URL
    private let pid: pid_t
    /// Held open while the child runs: its end of file tells the child to stop.
    private let input: Pipe
    private let stopped = Mutex(false)

    private init(baseURL: URL, realm: String, pid: pid_t, input: Pipe) {
        self.baseURL = baseURL
        issuer = TIMLayout.issuer(server: baseURL, realm: realm)
        keyServiceURL = TIMLayout.keyServiceURL(issuer: issuer)
        self.pid = pid
        self.input = input
    }

    /// Starts `keyservice-mock` with `arguments` (besides `--realm`, `--log-level` and `--exit-on-stdin-eof`) and
    /// returns once it listens.
    /// - Throws: ``CLIError`` (unavailable, exit 69) when the executable is missing or the server does not start,
    ///   with what it said on standard error.
    static func start(realm: String, arguments: [String]) async throws -> KeyServiceMockProcess {
        let executable = try executableURL()
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                [executable.path] + arguments + ["--realm", realm, "--log-level", "critical", "--exit-on-stdin-eof"],
                environment: ProcessInfo.processInfo.environment,
                descriptors: [
                    (0, input.fileHandleForReading.fileDescriptor), (1, output.fileHandleForWriting.fileDescriptor),
                    (2, errors.fileHandleForWriting.fileDescriptor),
                ],
                // Off the terminal, as Foundation's Process left it: a Ctrl-C meant for credential-vault (which may
                // hold it while a refresh is answered) must not end the server that answers.
                newSession: true,
                onlyStandardDescriptors: true
            )
        } catch {
            throw CLIError(status: .unavailable, description: "cannot run \(executable.path): \(error)")
        }
        // The child has its copies: the ends it writes must close here, or its output never ends.
        for end in [input.fileHandleForReading, output.fileHandleForWriting, errors.fileHandleForWriting] {
            try? end.close()
        }
        // Blocking reads, on a thread of their own: never on Swift's cooperative pool.
        let line = await BlockingThread.run("ksmock-start") { readLine(from: output.fileHandleForReading) }
        let prefix = "keyservice-mock listening on "
        guard let line, line.hasPrefix(prefix),
            let url = line.dropFirst(prefix.count).split(separator: " ").first.flatMap({ URL(string: String($0)) })
        else {
            kill(pid, SIGTERM)
            let said = await BlockingThread.run("ksmock-start") {
                String(decoding: errors.fileHandleForReading.readDataToEndOfFile().prefix(2_000), as: UTF8.self)
            }
            let reason = said.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError(
                status: .unavailable,
                description: "the embedded key service did not start"
                    + (reason.isEmpty ? "" : ": \(reason.replacingOccurrences(of: "keyservice-mock: ", with: ""))")
            )
        }
        // Its later output is not read: nothing is logged below critical, and the pipes' buffers hold the rest.
        return KeyServiceMockProcess(baseURL: url, realm: realm, pid: pid, input: input)
    }

    /// Stops the child: SIGTERM, then SIGKILL when it has not exited within five seconds; waits for it. Once.
    func stop() async {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        let pid = pid
        await BlockingThread.run("ksmock-stop") {
            kill(pid, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(5)
            var status: Int32 = 0
            while waitpid(pid, &status, WNOHANG) == 0 {
                guard ContinuousClock.now < deadline else {
                    kill(pid, SIGKILL)
                    _ = ProcessSpawn.waitForExit(pid)
                    return
                }
                usleep(10_000)
            }
        }
        try? input.fileHandleForWriting.close()
    }

    /// `keyservice-mock` beside the running executable, else on `PATH`.
    static func executableURL() throws -> URL {
        let name = "keyservice-mock"
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var candidates = [running.deletingLastPathComponent().appending(path: name)]
        if let own = Bundle.main.executableURL {
            candidates.append(own.resolvingSymlinksInPath().deletingLastPathComponent().appending(path: name))
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        candidates += path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appending(path: name) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CLIError(
                status: .unavailable,
                description: "the embedded default runs the package's keyservice-mock, which is neither beside "
                    + "credential-vault nor on PATH: build it (swift build --product keyservice-mock) or configure an issuer"
            )
        }
        return found
    }

    /// One line from `handle`, without its newline; nil at end of file first.
    private static func readLine(from handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while let byte = try? handle.read(upToCount: 1), let first = byte.first {
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
            if bytes.count > 4_096 { return nil }
        }
        return nil
    }
}
