import Foundation
import Testing
import VaultPOSIX
import VaultTestSupport

/// The built `keyservice`, run as a child process (``TestProcess``: its own process group, killed with it).
final class KeyServiceProcess: Sendable {
    let child: TestProcess
    let baseURL: URL
    let readyLine: String

    /// `{baseURL}/keyservice/v1`.
    var keyServiceURL: URL { baseURL.appendingPathComponent("keyservice/v1") }
    var pid: Int32 { child.pid }

    private init(child: TestProcess, baseURL: URL, readyLine: String) {
        self.child = child
        self.baseURL = baseURL
        self.readyLine = readyLine
    }

    /// The executable next to the test bundle (`swift build` puts every product in one folder).
    static var executable: URL {
        get throws {
            let candidates = [
                Bundle.main.bundleURL,
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                Bundle.main.bundleURL.deletingLastPathComponent(),
            ].map { $0.appendingPathComponent("keyservice") }
            return try #require(
                candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                "build the keyservice product first (swift build)"
            )
        }
    }

    /// Starts `keyservice serve` with `arguments` (plus `--listen 127.0.0.1:0` and `--log-format text` unless
    /// given) and waits for its ready line; its standard error goes to `standardError` when given. It stops when
    /// this test process is gone (`--exit-on-stdin-eof`).
    static func launch(
        _ arguments: [String],
        environment: [String: String]? = nil,
        standardError: URL? = nil
    ) async throws -> KeyServiceProcess {
        var arguments = arguments
        if !arguments.contains("--listen") { arguments += ["--listen", "127.0.0.1:0"] }
        if !arguments.contains("--log-format") { arguments += ["--log-format", "text"] }
        let child = try TestProcess(
            [try executable.path, "serve"] + arguments + ["--exit-on-stdin-eof"],
            environment: environment,
            input: .pipe,
            output: .pipe,
            error: standardError.map { .file($0) } ?? .none
        )
        let handle = try #require(child.output)
        let line = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                await Self.onOwnThread {
                    var buffer = Data()
                    while !buffer.contains(UInt8(ascii: "\n")) {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        buffer.append(chunk)
                    }
                    return String(decoding: buffer, as: UTF8.self).split(separator: "\n").first.map(String.init)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let line, let url = line.split(separator: " ").last, line.hasPrefix("keyservice listening on ") else {
            throw LaunchError(description: "keyservice printed no ready line")
        }
        return KeyServiceProcess(child: child, baseURL: try #require(URL(string: String(url))), readyLine: line)
    }

    /// Runs `keyservice` with `arguments` to its end.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> TestProcess.Completed {
        try await TestProcess.run([try executable.path] + arguments, environment: environment)
    }

    func signal(_ number: Int32) {
        child.signal(number)
    }

    /// The exit status (128 + the signal when one ended it), nil when still running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(15)) async -> Int32? {
        await child.wait(timeout: timeout)?.status
    }

    struct LaunchError: Error, CustomStringConvertible {
        let description: String
    }

    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await BlockingThread.run("ks-process", body)
    }
}
