import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's `keyservice-mock` run as a child process on 127.0.0.1, so the `credential-vault` binary links no server
/// stack (Hummingbird, NIO, SQLite) for its embedded default and its demo.
///
/// The executable is the one beside `credential-vault` (both are built into the same directory), else the first on `PATH`.
/// The child stops when ``stop()`` sends it SIGTERM (SIGKILL after five seconds), and on its own when its
/// standard input closes, so a `credential-vault` that is killed leaves no server behind.
final class KeyServiceMockProcess: Sendable {
    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    /// `{baseURL}/auth/realms/{realm}`.
    let issuer: URL
    /// `{issuer}/keyservice/v1`.
    let keyServiceURL: URL
    private let process: Process
    /// Held open while the child runs: its end of file tells the child to stop.
    private let input: Pipe

    private init(baseURL: URL, realm: String, process: Process, input: Pipe) {
        self.baseURL = baseURL
        issuer = TIMLayout.issuer(server: baseURL, realm: realm)
        keyServiceURL = TIMLayout.keyServiceURL(issuer: issuer)
        self.process = process
        self.input = input
    }

    /// Starts `keyservice-mock` with `arguments` (besides `--realm`, `--log-level` and `--exit-on-stdin-eof`) and
    /// returns once it listens.
    /// - Throws: ``CLIError`` (unavailable, exit 69) when the executable is missing or the server does not start,
    ///   with what it said on standard error.
    static func start(realm: String, arguments: [String]) async throws -> KeyServiceMockProcess {
        let executable = try executableURL()
        let process = Process()
        process.executableURL = executable
        process.arguments =
            arguments + ["--realm", realm, "--log-level", "critical", "--exit-on-stdin-eof"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw CLIError(status: .unavailable, description: "cannot run \(executable.path): \(error)")
        }
        // Blocking reads, on a thread of their own: never on Swift's cooperative pool.
        let line: String? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: readLine(from: output.fileHandleForReading))
            }
        }
        let prefix = "keyservice-mock listening on "
        guard let line, line.hasPrefix(prefix),
            let url = line.dropFirst(prefix.count).split(separator: " ").first.flatMap({ URL(string: String($0)) })
        else {
            process.terminate()
            let said: String = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let data = errors.fileHandleForReading.readDataToEndOfFile()
                    continuation.resume(returning: String(decoding: data.prefix(2_000), as: UTF8.self))
                }
            }
            let reason = said.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError(
                status: .unavailable,
                description: "the embedded key service did not start"
                    + (reason.isEmpty ? "" : ": \(reason.replacingOccurrences(of: "keyservice-mock: ", with: ""))")
            )
        }
        // Its later output is not read: nothing is logged below critical, and the pipes' buffers hold the rest.
        return KeyServiceMockProcess(baseURL: url, realm: realm, process: process, input: input)
    }

    /// Stops the child: SIGTERM, then SIGKILL when it has not exited within five seconds.
    func stop() async {
        guard process.isRunning else { return }
        let process = process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.terminate()
                let deadline = Date().addingTimeInterval(5)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                continuation.resume()
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
