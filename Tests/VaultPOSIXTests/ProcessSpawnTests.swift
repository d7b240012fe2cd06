import Foundation
import Testing
import VaultPOSIX

#if os(Linux)
/// The one spawn: its descriptor map, its closing of the rest, its process groups and sessions, the signals it
/// resets and the ones it leaves ignored, and the wait's statuses. Each child is `/bin/sh` reporting on itself.
@Suite("posix_spawn in one place")
struct ProcessSpawnTests {
    /// Runs `script` in `/bin/sh` with its standard output on a pipe; what it printed and its exit status.
    static func run(
        _ script: String,
        closingOthers: Bool = true,
        group: ProcessSpawn.Group = .inherited
    ) throws -> (output: String, status: Int32?) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        // Close-on-exec: only the mapped copy (descriptor 1) reaches the child, so the read below sees its end.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let pid: Int32
        do {
            pid = try ProcessSpawn.spawn(
                ["/bin/sh", "-c", script],
                environment: ["PATH": "/usr/bin:/bin"],
                descriptors: [(1, ends[1])],
                closingOthers: closingOthers,
                group: group
            )
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += buffer[0..<count]
        }
        close(ends[0])
        return (String(decoding: output, as: UTF8.self), ProcessSpawn.waitForExit(pid))
    }

    /// Fields 1, 5 and 6 of the child's `/proc/PID/stat`: its process id, process group and session.
    static func ids(_ group: ProcessSpawn.Group) throws -> [Int32] {
        let (output, status) = try run(#"cut -d" " -f1,5,6 /proc/$$/stat"#, group: group)
        #expect(status == 0)
        return output.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
    }

    @Test("the wait answers the exit status, or 128 + the signal that ended the child")
    func exitStatuses() throws {
        #expect(try Self.run("exit 7").status == 7)
        #expect(try Self.run("kill -TERM $$").status == 128 + SIGTERM)
        #expect(ProcessSpawn.waitForExit(getpid()) == nil, "not a child: nothing to wait for")
    }

    @Test("a mapped descriptor is the child's; with closingOthers nothing else of ours is open in it")
    func descriptors() throws {
        // A descriptor of ours that a spawn would otherwise leave open in the child (no FD_CLOEXEC).
        let ours = open("/dev/null", O_RDONLY)
        try #require(ours > 2)
        defer { close(ours) }
        let probe = "[ -e /proc/$$/fd/\(ours) ] && echo open || echo closed"
        #expect(try Self.run(probe, closingOthers: true).output == "closed\n")
        #expect(try Self.run(probe, closingOthers: false).output == "open\n")
    }

    @Test("inherited stays in our group and session; own leads a group; newSession leads a session")
    func groups() throws {
        let inherited = try Self.ids(.inherited)
        #expect(inherited.count == 3)
        #expect(inherited.dropFirst().first == getpgrp())
        #expect(inherited.last == getsid(0))

        let own = try Self.ids(.own)
        #expect(own.count == 3)
        #expect(own[1] == own[0], "the child leads its process group")
        #expect(own[2] == getsid(0))

        let session = try Self.ids(.newSession)
        #expect(session.count == 3)
        #expect(session[2] == session[0], "the child leads its session")
        #expect(session[1] == session[0])
    }

    @Test("a signal this package handles starts at its default in the child; one ignored by our starter stays ignored")
    func signals() throws {
        // SIGPIPE is one of ours; SIGUSR2 stands for a signal whoever started this process ignores.
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        let previousUser = signal(SIGUSR2, SIG_IGN)
        defer {
            signal(SIGPIPE, previousPipe)
            signal(SIGUSR2, previousUser)
        }
        let (output, status) = try Self.run("grep '^SigIgn:' /proc/$$/status")
        #expect(status == 0)
        let mask = try #require(output.split(separator: "\t").last.flatMap { UInt64($0.dropLast(), radix: 16) })
        #expect(mask & (1 << UInt64(SIGPIPE - 1)) == 0, "SIGPIPE is ignored in the child: \(output)")
        #expect(mask & (1 << UInt64(SIGUSR2 - 1)) != 0, "SIGUSR2 is not ignored in the child: \(output)")
    }

    @Test("a program that is not there fails at the start, naming it, with ENOENT")
    func missingProgram() {
        #expect(
            throws: ProcessSpawn.Failure(step: .starting, operation: "posix_spawn /nonexistent/x", errorNumber: ENOENT)
        ) {
            _ = try ProcessSpawn.spawn(["/nonexistent/x"], environment: [:], closingOthers: true)
        }
    }
}
#endif
