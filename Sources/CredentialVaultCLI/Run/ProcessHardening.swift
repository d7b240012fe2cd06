#if os(Linux)
import Glibc
#endif

/// What `credential-vault` does to its own process before it reads anything: passwords, refresh tokens and keys must not
/// end up in a core file.
enum ProcessHardening {
    /// Turns core dumps off for good (soft and hard limit 0) and marks the process not dumpable, which also
    /// keeps other processes of the same user from attaching with ptrace and reading its memory. A failure is
    /// reported on standard error; the command still runs.
    static func apply() {
        #if os(Linux)
        if prctlFunction?(setDumpable, 0, 0, 0, 0) != 0 {
            Terminal.note("credential-vault: warning: could not mark the process not dumpable (prctl PR_SET_DUMPABLE)")
        }
        // Second, so that a core limit of 0 seen in /proc/PID/limits means both are done (the CLI tests rely on it).
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) != 0 {
            Terminal.note("credential-vault: warning: could not turn core dumps off (setrlimit: errno \(errno))")
        }
        #endif
    }

    #if os(Linux)
    /// PR_SET_DUMPABLE from <linux/prctl.h>, which the Glibc module does not import.
    private static let setDumpable: CInt = 4

    private typealias Prctl = @convention(c) (CInt, CUnsignedLong, CUnsignedLong, CUnsignedLong, CUnsignedLong) -> CInt

    /// glibc's `prctl`, looked up at run time: Swift does not import C variadic functions. Calling it through a
    /// prototype with five fixed integer arguments passes them in the registers its `va_arg` reads (x86-64 and
    /// AArch64 Linux calling conventions), as the kernel's five-argument system call expects.
    private static var prctlFunction: Prctl? {
        // A null handle is RTLD_DEFAULT on glibc: the symbol as the program itself resolves it.
        dlsym(nil, "prctl").map { unsafeBitCast($0, to: Prctl.self) }
    }
    #endif
}
