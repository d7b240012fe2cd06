import CredentialVault
import Foundation
import VaultPOSIX

/// A child started with `posix_spawn`: Foundation's `Process` puts every child in a process group of its own,
/// which takes a command run by `credential-vault exec` off the terminal (a read from it would stop with SIGTTIN).
enum ChildProcess {
    /// Starts `arguments[0]` (looked up on PATH when it has no slash) with `environment`; `descriptors` maps a
    /// child's descriptor to one of ours (0, 1 and 2 are inherited unless mapped). With `onlyStandardDescriptors`
    /// every other descriptor is closed in the child: a long-lived process must not keep a pipe of whoever started
    /// us open.
    static func spawn(
        _ arguments: [String],
        environment: [String: String],
        descriptors: [(child: Int32, parent: Int32)] = [],
        newSession: Bool = false,
        onlyStandardDescriptors: Bool = false
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (child, parent) in descriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }
        if onlyStandardDescriptors {
            let result = ProcessSpawn.closeDescriptors(from: 3, in: &actions)
            guard result == 0 else {
                throw UnixSocket.Failure("posix_spawn_file_actions_addclosefrom_np", code: result)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with default signal dispositions and no signal blocked, whatever this process (and the
        // thread that spawns) ignores or blocks.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= ProcessSpawn.newSessionFlag }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw UnixSocket.Failure("cannot run \(arguments[0])", code: result) }
        return pid
    }

    /// Waits for `pid` on a thread of its own; its exit status, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) async -> Int32 {
        await BlockingThread.run("vault-wait") {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { return ExitStatus.failure.rawValue }
            }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
    }
}
