import Foundation
import KeyServiceMock
import Synchronization
import VaultTestSupport

/// A running `vault-proof-child` (Tests/ProofChild): its lines as they come, a kill, its end.
///
/// Every blocking step (reading its output, waiting for its end) runs on a thread of its own, never on Swift's
/// cooperative pool, where the in-process servers the child talks to need the threads. The child is a
/// ``TestProcess``: its process group is killed when the last reference to this goes.
final class ProofChildProcess: Sendable {
    private let child: TestProcess
    private let output: FileHandle
    private let errors: FileHandle
    private let read = Mutex<(lines: [String], partial: Data, ended: Bool)>(([], Data(), false))

    /// How to run the child: as this user, or as uid and gid 65534 (nobody) through setpriv, for a fault that
    /// root would not meet.
    enum Identity: Sendable {
        case current
        case nobody
    }

    static let setpriv = "/usr/bin/setpriv"

    /// Whether the child can run as nobody here: only root may switch, with setpriv installed.
    static var canRunAsNobody: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv)
    }

    /// Starts the child with `arguments` and writes `input`, one line each, to its standard input (left open:
    /// the child reads what it needs; ``end()`` closes it). With `caFile` (the fixture's, when its servers speak
    /// https) the child trusts that authority: it is its `CREDENTIAL_VAULT_CA_FILE`, and for `.nobody` it is given
    /// to uid 65534, so that a file of mode 0600 stays readable to the child.
    init(_ arguments: [String], input lines: [String], as identity: Identity = .current, caFile: URL? = nil) throws {
        let program = try BuiltProducts.executable("vault-proof-child").path
        let command =
            switch identity {
            case .current: [program] + arguments
            case .nobody: [Self.setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", program] + arguments
            }
        var environment = ProcessInfo.processInfo.environment
        if let caFile {
            environment["CREDENTIAL_VAULT_CA_FILE"] = caFile.path
            if identity == .nobody, chown(caFile.path, 65534, 65534) != 0 {
                throw FixtureError("chown of the CA file failed with errno \(errno)")
            }
        }
        child = try TestProcess(command, environment: environment, input: .pipe, output: .pipe, error: .pipe)
        guard let output = child.output, let errors = child.error else { preconditionFailure("both are pipes") }
        self.output = output
        self.errors = errors
        if !lines.isEmpty { try child.write(lines.joined(separator: "\n") + "\n") }
    }

    /// Reads until `done` holds for the lines so far or the output ends; returns the lines so far.
    func lines(until done: @escaping @Sendable ([String]) -> Bool) async throws -> [String] {
        try await onOwnThread { self.readBlocking(until: done) }
    }

    /// Reads until the `count`-th line, waits `delay`, then kills the child with SIGKILL; returns every line it
    /// printed before it died. On a thread of its own, so the delay is the child's time, not the pool's.
    func kill(afterLines count: Int, delay: Duration) async throws -> (lines: [String], killed: Bool) {
        try await kill(when: { lines in lines.count >= count }, delay: delay)
    }

    /// Reads until a line equal to `line`, then kills the child with SIGKILL at once.
    func kill(onLine line: String) async throws -> (lines: [String], killed: Bool) {
        try await kill(when: { lines in lines.contains(line) }, delay: .zero)
    }

    private func kill(
        when ready: @escaping @Sendable ([String]) -> Bool,
        delay: Duration
    ) async throws -> (lines: [String], killed: Bool) {
        try await signal(SIGKILL, when: ready, delay: delay)
    }

    /// Reads until `ready` holds for the lines so far, waits `delay`, then sends signal `number`; returns every line
    /// the child printed before it ended, and whether the signal was sent and ended it.
    func signal(
        _ number: Int32,
        when ready: @escaping @Sendable ([String]) -> Bool,
        delay: Duration
    ) async throws -> (lines: [String], killed: Bool) {
        let (lines, sent) = try await onOwnThread {
            let seen = self.readBlocking(until: ready)
            var sent = false
            if ready(seen) {
                let (seconds, attoseconds) = delay.components
                usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
                sent = self.child.termination == nil
                self.child.signal(number)
                // A child that outlives its signal by 30 s is a failure, not a hang.
                for _ in 0..<3_000 where self.child.termination == nil { usleep(10_000) }
                if self.child.termination == nil { self.child.killGroup() }
            }
            let all = self.readBlocking(until: { _ in false })
            return (all, sent)
        }
        let termination = await child.wait()
        return (lines, sent && termination == .signaled(number))
    }

    /// Closes the child's standard input, reads its output to the end and waits for it; returns its lines.
    func end() async throws -> [String] {
        child.closeInput()
        let all = try await onOwnThread { self.readBlocking(until: { _ in false }) }
        _ = await child.wait()
        return all
    }

    /// What the child wrote to standard error (read once it has ended).
    func standardError() async throws -> String {
        try await onOwnThread { String(decoding: self.errors.readDataToEndOfFile(), as: UTF8.self) }
    }

    /// The exit status, or the signal that ended it, once it has ended.
    var termination: String {
        child.termination?.description ?? "still running"
    }

    private func readBlocking(until done: ([String]) -> Bool) -> [String] {
        while true {
            let (lines, ended) = read.withLock { ($0.lines, $0.ended) }
            if ended || done(lines) { return lines }
            let chunk = output.availableData
            read.withLock { state in
                if chunk.isEmpty {
                    state.ended = true
                    return
                }
                state.partial.append(chunk)
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    state.lines.append(
                        String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self)
                    )
                    state.partial.removeSubrange(state.partial.startIndex...newline)
                }
            }
        }
    }
}
