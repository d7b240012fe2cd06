/// `posix_spawn(2)` in Swift types, for the test launcher (`VaultTestSupport.TestProcess`).
///
/// In this module for the reason ``FileStatus`` is: `posix_spawn_file_actions_t`, `posix_spawnattr_t` and
/// `sigset_t` are C structs whose definer Swift may name differently from one build to the next where Foundation
/// is imported too.
package enum ProcessSpawn {
    /// A failed spawn: the call that failed and its error number.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was being done (`posix_spawn /bin/true`).
        package let operation: String
        /// The error number (`ENOENT`, `EACCES`, ...).
        package let errorNumber: Int32

        /// The operation and the system's words for the error number.
        package var description: String { "\(operation): \(String(cString: strerror(errorNumber)))" }
    }

    /// Starts `arguments[0]` (a path, or a name looked up on `PATH` when it has no slash) with exactly
    /// `environment`, and returns its process id.
    ///
    /// The child's descriptors 0, 1 and 2 are `descriptors[0]`, `[1]` and `[2]` of this process; every other
    /// descriptor is closed in it, so a child never holds a pipe another part of this process opened. It starts
    /// with default signal dispositions and no signal blocked. With `ownProcessGroup` it leads a process group
    /// of its own (its id is the child's process id), so one `kill(-pid, ...)` reaches it and whatever it starts.
    /// With `directory`, it starts there.
    /// - Throws: ``Failure`` when the child cannot be started (no such file, not executable, ...).
    package static func spawn(
        _ arguments: [String],
        environment: [String: String],
        descriptors: (input: Int32, output: Int32, error: Int32),
        directory: String? = nil,
        ownProcessGroup: Bool = true
    ) throws(Failure) -> Int32 {
        precondition(!arguments.isEmpty, "a child needs a program")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (child, parent) in [(Int32(0), descriptors.input), (1, descriptors.output), (2, descriptors.error)] {
            let result = posix_spawn_file_actions_adddup2(&actions, parent, child)
            guard result == 0 else { throw Failure(operation: "dup2 \(parent) to \(child)", errorNumber: result) }
        }
        #if os(Linux)
        guard let closeFrom = gnuFunction("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self) else {
            throw Failure(operation: "posix_spawn_file_actions_addclosefrom_np", errorNumber: ENOSYS)
        }
        let closed = closeFrom(&actions, 3)
        guard closed == 0 else { throw Failure(operation: "close descriptors from 3", errorNumber: closed) }
        if let directory {
            guard let changeDirectory = gnuFunction("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self)
            else { throw Failure(operation: "posix_spawn_file_actions_addchdir_np", errorNumber: ENOSYS) }
            let changed = changeDirectory(&actions, directory)
            guard changed == 0 else { throw Failure(operation: "cd \(directory)", errorNumber: changed) }
        }
        #else
        if directory != nil { throw Failure(operation: "posix_spawn_file_actions_addchdir_np", errorNumber: ENOSYS) }
        #endif

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if ownProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw Failure(operation: "posix_spawn \(arguments[0])", errorNumber: result) }
        return pid
    }

    /// The spawn flag that starts the child in a new session, away from the terminal: `POSIX_SPAWN_SETSID`, 0x80 in
    /// glibc 2.26 (whose Glibc module does not import it) and 0x400 on Darwin (where 0x80 would start the child
    /// suspended).
    package static let newSessionFlag: Int16 = {
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
    package static func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) -> Int32 {
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
