import VaultPOSIX

/// What `credential-vault` does to its own process before it reads anything: passwords, refresh tokens and keys must not
/// end up in a core file.
enum ProcessHardening {
    /// Turns core dumps off for good (soft and hard limit 0) and marks the process not dumpable, which also
    /// keeps other processes of the same user from attaching with ptrace and reading its memory (``CoreDumps``: on
    /// Linux; elsewhere nothing is done). A failure is reported on standard error; the command still runs.
    static func apply() {
        if !CoreDumps.markNotDumpable() {
            Terminal.note("credential-vault: warning: could not mark the process not dumpable (prctl PR_SET_DUMPABLE)")
        }
        // Second, so that a core limit of 0 seen in /proc/PID/limits means both are done (the CLI tests rely on it).
        if let errorNumber = CoreDumps.disableCoreFiles() {
            Terminal.note("credential-vault: warning: could not turn core dumps off (setrlimit: errno \(errorNumber))")
        }
    }
}
