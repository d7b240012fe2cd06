import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Passwords, refresh tokens and keys live in `credential-vault`'s memory: its process writes no core file and other
/// processes of the same user cannot read its memory (Linux: RLIMIT_CORE 0, PR_SET_DUMPABLE 0).
@Suite("credential-vault: no core files, no same-user ptrace", .tags(.cli))
struct CoreDumpTests {
    /// Starts `credential-vault decode` on a pseudo-terminal (it then waits for the token), as `nobody` when the tests
    /// run as root, so that the owner of its /proc files tells dumpable from not. Waits until its core limit
    /// reads 0 (set last at start: PR_SET_DUMPABLE is done by then), prints `CORE=soft,hard`, `OWNER=` (the
    /// owner of /proc/PID/status: root when the process is not dumpable), `UID=` (its real user), ends the
    /// input and prints `EXIT=n`. 60 s is only a safety bound.
    static let script = #"""
        import os, pty, sys, time
        command = sys.argv[1:]
        pid, fd = pty.fork()
        if pid == 0:
            if os.getuid() == 0:
                os.setgroups([]); os.setgid(65534); os.setuid(65534)
            os.execv(command[0], command)
        deadline = time.monotonic() + 60
        core = ["?", "?"]
        while core != ["0", "0"] and time.monotonic() < deadline:
            with open("/proc/%d/limits" % pid) as limits:
                core = [line.split()[4:6] for line in limits if line.startswith("Max core file size")][0]
            time.sleep(0.01)
        owner = os.stat("/proc/%d/status" % pid).st_uid
        with open("/proc/%d/status" % pid) as status:
            uid = [line.split()[1] for line in status if line.startswith("Uid:")][0]
        sys.stdout.write("CORE=%s\nOWNER=%d\nUID=%s\n" % (",".join(core), owner, uid))
        os.write(fd, b"\x04")
        while True:
            try:
                if not os.read(fd, 4096): break
            except OSError:
                break
        _, status = os.waitpid(pid, 0)
        sys.stdout.write("EXIT=%d\n" % os.waitstatus_to_exitcode(status))
        """#

    @Test(
        "a running vault has a core limit of 0 (soft and hard) and is not dumpable",
        .enabled(if: ReachableCopy.unreachableReason == nil, Comment(rawValue: ReachableCopy.unreachableReason ?? ""))
    )
    func noCoreFiles() async throws {
        // As root the binary runs as uid 65534, who may not reach it where it was built (a checkout in a 0700
        // directory, under /root): it runs from a copy that user can reach, never from the checkout.
        let copy = getuid() == 0 ? try ReachableCopy.make(of: CLISandbox.vaultBinary) : nil
        defer { if let copy { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) } }
        let binary = copy ?? CLISandbox.vaultBinary
        try await withSandbox(withServer: false) { sandbox in
            let run = try await sandbox.runPython(Self.script, arguments: [binary.path, "decode"])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("CORE=0,0\n"), "\(run.stdout)")
            #expect(run.stdout.contains("OWNER=0\n"), "its /proc files belong to root: not dumpable. \(run.stdout)")
            #expect(!run.stdout.contains("UID=0\n"), "the check needs vault to run as another user. \(run.stdout)")
            #expect(run.stdout.contains("EXIT=64"), "it ran normally: no token given. \(run.stdout)")
        }
    }
}
