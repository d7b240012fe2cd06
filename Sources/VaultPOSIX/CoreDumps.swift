/// Keeping a process's memory out of core files and away from debuggers of the same user: the Linux calls, and
/// nothing on other systems (where each reports success).
package enum CoreDumps {
    /// Marks the process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), which also keeps other processes of the same
    /// user from attaching with ptrace and reading its memory.
    /// - Returns: whether the kernel accepted it.
    package static func markNotDumpable() -> Bool {
        #if os(Linux)
        return prctlFunction?(setDumpable, 0, 0, 0, 0) == 0
        #else
        return true
        #endif
    }

    /// Turns core files off for good: soft and hard limit 0 (`setrlimit(RLIMIT_CORE)`).
    /// - Returns: nil when done, else the call's `errno`.
    package static func disableCoreFiles() -> Int32? {
        #if os(Linux)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        return setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0 ? nil : errno
        #else
        return nil
        #endif
    }

    /// Leaves the `count` bytes of whole pages at `pages` out of core files (`madvise(MADV_DONTDUMP)`); advice only.
    /// - Returns: whether the kernel took it (always true elsewhere than Linux).
    package static func exclude(pages: UnsafeMutableRawPointer, count: Int) -> Bool {
        #if os(Linux)
        return madvise(pages, count, MADV_DONTDUMP) == 0
        #else
        return true
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
