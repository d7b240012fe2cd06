#if os(Linux)
import Foundation

/// Runs one test of this test binary in a child process and collects what it prints: for a defect that ends the
/// process it runs in (a trap), which only a parent can watch. The child runs on a thread of its own, never on
/// Swift's cooperative pool (reading its output and waiting for it block).
enum ChildTestRun {
    struct Result {
        let terminatedBySignal: Bool
        let status: Int32
        let output: String
    }

    /// Runs the tests matching `filter` with `environment` added to this process's.
    static func run(filter: String, environment: [String: String]) async throws -> Result {
        let process = Process()
        // This very binary, wherever swift test put it.
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: Result(
                        terminatedBySignal: process.terminationReason == .uncaughtSignal,
                        status: process.terminationStatus,
                        output: String(decoding: output, as: UTF8.self)
                    )
                )
            }
            thread.name = "hostile-input-child"
            thread.start()
        }
    }
}
#endif
