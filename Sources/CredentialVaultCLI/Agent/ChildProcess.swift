import CredentialVault
import Foundation
import VaultPOSIX

/// A child of the command-line tool, started with ``ProcessSpawn`` (Foundation's `Process` puts every child in a
/// process group of its own, which takes a command run by `credential-vault exec` off the terminal: a read from it
/// would stop with SIGTTIN), its failures in the tool's words.
enum ChildProcess {
    /// Starts `arguments[0]` (looked up on PATH when it has no slash) with `environment`; `descriptors` maps a
    /// child's descriptor to one of ours (0, 1 and 2 are inherited unless mapped). With `onlyStandardDescriptors`
    /// every other descriptor is closed in the child: a long-lived process must not keep a pipe of whoever started
    /// us open. With `newSession` the child leads a session of its own, away from our terminal.
    /// - Throws: ``UnixSocket/Failure``: "cannot run `arguments[0]`" with the error number when it cannot be started.
    static func spawn(
        _ arguments: [String],
        environment: [String: String],
        descriptors: [(child: Int32, parent: Int32)] = [],
        newSession: Bool = false,
        onlyStandardDescriptors: Bool = false
    ) throws -> pid_t {
        do {
            return try ProcessSpawn.spawn(
                arguments,
                environment: environment,
                descriptors: descriptors,
                closingOthers: onlyStandardDescriptors,
                group: newSession ? .newSession : .inherited
            )
        } catch {
            let call = error.step == .starting ? "cannot run \(arguments[0])" : error.operation
            throw UnixSocket.Failure(call, code: error.errorNumber)
        }
    }

    /// Waits for `pid` on a thread of its own; its exit status, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) async -> Int32 {
        await BlockingThread.run("vault-wait") { ProcessSpawn.waitForExit(pid) ?? ExitStatus.failure.rawValue }
    }
}
