/// `posix_spawn(2)` in Swift types: the one way this package starts a child (the command-line tool's `exec`, agent,
/// askpass, browser, `git` and embedded key service, and the test launcher `VaultTestSupport.TestProcess`), and the
/// blocking wait for a child's end the tool uses (a wait with a deadline polls with `WNOHANG` where it is needed).
///
/// In this module for the reason ``FileStatus`` is: `posix_spawn_file_actions_t`, `posix_spawnattr_t` and
/// `sigset_t` are C structs whose definer Swift may name differently from one build to the next where Foundation
/// is imported too.
package enum ProcessSpawn {
    /// A failed spawn: the step and the call that failed, and its error number.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Where a spawn failed.
        package enum Step: Sendable, Equatable {
            /// Setting the child up (its descriptors, its directory): the program was not looked at.
            case preparing
            /// Starting the program itself (no such file, not executable, ...).
            case starting
        }

        /// Where it failed.
        package let step: Step
        /// What was being done (`posix_spawn /bin/true`).
        package let operation: String
        /// The error number (`ENOENT`, `EACCES`, ...).
        package let errorNumber: Int32

        /// A failure at `step`, of `operation`, with `errorNumber`.
        package init(step: Step, operation: String, errorNumber: Int32) {
            self.step = step
            self.operation = operation
            self.errorNumber = errorNumber
        }

        /// The operation and the system's words for the error number.
        package var description: String { "\(operation): \(String(cString: strerror(errorNumber)))" }
    }

    /// Where the child stands among process groups and sessions.
    package enum Group: Sendable {
        /// In this process's group and session (a command run in the foreground of our terminal).
        case inherited
        /// Leading a process group of its own (its id is the child's process id), so one `kill(-pid, ...)` reaches
        /// it and whatever it starts.
        case own
        /// Leading a session of its own, away from the terminal (a background process).
        case newSession
    }

    /// Starts `arguments[0]` (a path, or a name looked up on `PATH` when it has no slash) with exactly
    /// `environment`, and returns its process id.
    ///
    /// `descriptors` maps a child's descriptor to one of this process's (0, 1 and 2 are inherited unless mapped);
    /// with `closingOthers` every descriptor from 3 up is closed in the child, so a child never holds a pipe another
    /// part of this process opened (Linux only: elsewhere the spawn fails with `ENOSYS` rather than leak them), and
    /// only 0, 1 and 2 may be mapped. The child starts with no signal blocked and with the default disposition of
    /// every signal this package handles or ignores (``handledSignals``); a signal whoever started this process
    /// ignores stays ignored in the child, as `env` and `system(3)` keep it. With `directory`, it starts there (Linux
    /// only, likewise).
    /// - Throws: ``Failure`` when the child cannot be started (no such file, not executable, ...).
    package static func spawn(
        _ arguments: [String],
        environment: [String: String],
        descriptors: [(child: Int32, parent: Int32)] = [],
        closingOthers: Bool,
        directory: String? = nil,
        group: Group = .inherited
    ) throws(Failure) -> Int32 {
        precondition(!arguments.isEmpty, "a child needs a program")
        precondition(
            !closingOthers || descriptors.allSatisfy { (0...2).contains($0.child) },
            "descriptors from 3 up are closed in the child"
        )
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (child, parent) in descriptors {
            let result = posix_spawn_file_actions_adddup2(&actions, parent, child)
            guard result == 0 else {
                throw Failure(step: .preparing, operation: "dup2 \(parent) to \(child)", errorNumber: result)
            }
        }
        if closingOthers {
            let closed = closeDescriptors(from: 3, in: &actions)
            guard closed == 0 else {
                throw Failure(
                    step: .preparing,
                    operation: "posix_spawn_file_actions_addclosefrom_np",
                    errorNumber: closed
                )
            }
        }
        if let directory {
            #if os(Linux)
            guard let changeDirectory = gnuFunction("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self)
            else {
                throw Failure(step: .preparing, operation: "posix_spawn_file_actions_addchdir_np", errorNumber: ENOSYS)
            }
            let changed = changeDirectory(&actions, directory)
            guard changed == 0 else {
                throw Failure(step: .preparing, operation: "cd \(directory)", errorNumber: changed)
            }
            #else
            throw Failure(step: .preparing, operation: "cd \(directory)", errorNumber: ENOSYS)
            #endif
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in handledSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        switch group {
        case .inherited:
            break
        case .own:
            flags |= Int16(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        case .newSession:
            flags |= newSessionFlag
        }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(step: .starting, operation: "posix_spawn \(arguments[0])", errorNumber: result)
        }
        return pid
    }

    /// The signals this package catches, ignores or holds somewhere (the library's termination signals, the agent,
    /// `exec`): a child starts with each at its default, whatever this process made of it.
    package static let handledSignals: [Int32] = [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Waits for the child `pid` to end (blocking the calling thread; EINTR is retried) and answers its exit status,
    /// or 128 + the number of the signal that ended it, as a shell reports it; nil when it cannot be waited for
    /// (not a child of this process, or already waited for).
    package static func waitForExit(_ pid: Int32) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return nil }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// The spawn flag that starts the child in a new session, away from the terminal: `POSIX_SPAWN_SETSID`, 0x80 in
    /// glibc 2.26 (whose Glibc module does not import it) and 0x400 on Darwin (where 0x80 would start the child
    /// suspended).
    private static let newSessionFlag: Int16 = {
        #if os(Linux)
        0x80
        #else
        0x400
        #endif
    }()

    /// Adds to `actions` the closing, in the child, of every descriptor from `lowest` up
    /// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34). Elsewhere than on Linux nothing is added and the
    /// answer is `ENOSYS`: a caller that needs the descriptors closed fails instead of leaking them.
    /// - Parameters:
    ///   - lowest: the first descriptor closed.
    ///   - actions: the file actions of a spawn to come.
    /// - Returns: 0, or the error number (`ENOSYS` where the C library lacks the call).
    private static func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) -> Int32 {
        #if os(Linux)
        guard let closeFrom = gnuFunction("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self) else {
            return ENOSYS
        }
        return closeFrom(&actions, lowest)
        #else
        return ENOSYS
        #endif
    }

    #if os(Linux)
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt
    private typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> CInt

    /// A glibc extension (`_np`) looked up at run time: the Glibc module, built without `_GNU_SOURCE`, does not
    /// import them (glibc 2.29 and 2.34).
    private static func gnuFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
        dlsym(nil, name).map { unsafeBitCast($0, to: type) }
    }
    #endif
}
