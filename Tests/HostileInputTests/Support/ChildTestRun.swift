#if os(Linux)
import Foundation
import VaultTestSupport

/// Runs one test of this test binary in a child process and collects what it prints: for a defect that ends the
/// process it runs in (a trap), which only a parent can watch. Reading its output and waiting for it block: both
/// run on threads of their own (``TestProcess``), never on Swift's cooperative pool.
enum ChildTestRun {
    struct Result {
        let terminatedBySignal: Bool
        let status: Int32
        let output: String
    }

    /// Runs the tests matching `filter` with `environment` added to this process's.
    static func run(filter: String, environment: [String: String]) async throws -> Result {
        // This very binary, wherever swift test put it.
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let run = try await TestProcess.run(
            [binary, "--testing-library", "swift-testing", "--filter", filter],
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            mergingError: true
        )
        let signalled: Bool
        let status: Int32
        switch run.termination {
        case .exited(let code): (signalled, status) = (false, code)
        case .signaled(let signal): (signalled, status) = (true, signal)
        }
        return Result(terminatedBySignal: signalled, status: status, output: run.outputText)
    }
}
#endif
