import Foundation
import Testing
import VaultTestSupport

/// The launcher every test uses to start a child process (issue 21: Foundation's `Process.run()` crashed the test
/// process, and children it left behind held `swift test`'s pipe, so the run hung instead of failing).
@Suite("TestProcess: a test's child and everything it starts end with the test")
struct TestProcessTests {
    @Test("a grandchild that ignores SIGTERM and holds the output pipe is gone after the scope, and the read ends")
    func groupEndsWithScope() async throws {
        // The grandchild ignores SIGTERM, prints its pid and becomes `sleep`, holding the pipe for ten minutes.
        let script = #"sh -c 'trap "" TERM; echo $$; exec sleep 600' & wait"#
        let (group, grandchild, output) = try await TestProcess.with(["/bin/sh", "-c", script]) { child in
            let output = try #require(child.output)
            let line = try #require(try await Self.firstLine(of: output), "the grandchild printed no pid")
            return (child.pid, try #require(Int32(line)), output)
        }
        #expect(grandchild != group)
        // A hang guard, not a speed rule: the read ends at once when no process holds the pipe.
        let ended = await Self.readToEnd(output, orAfter: .seconds(30))
        #expect(ended, "the pipe's read did not end: a process still holds it")
        #expect(await Self.livingMembers(ofGroup: group, waiting: .seconds(30)).isEmpty)
    }

    @Test("a child run to its end gives its exit status, its output and its standard error apart")
    func runToEnd() async throws {
        let run = try await TestProcess.run(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(run.termination == .exited(3))
        #expect(run.outputText == "out\n")
        #expect(run.errorText == "err\n")
        let killed = try await TestProcess.run(["/bin/sh", "-c", "kill -9 $$"])
        #expect(killed.termination == .signaled(SIGKILL))
        #expect(killed.termination.status == 128 + SIGKILL)
    }

    @Test("a child gets no descriptor of the test process but its standard input, output and error")
    func onlyThreeDescriptors() async throws {
        // A pipe of this process, not close-on-exec, as Foundation's Pipe makes it.
        let pipe = Pipe()
        let run = try await TestProcess.run(["/bin/sh", "-c", "ls /proc/self/fd"])
        #expect(run.outputText.split(separator: "\n").sorted() == ["0", "1", "2", "3"], "ls's own directory is 3")
        withExtendedLifetime(pipe) {}
    }

    /// The first line of `output`, read on a thread of its own; nil at end of file.
    static func firstLine(of output: FileHandle) async throws -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var buffer = Data()
                while !buffer.contains(UInt8(ascii: "\n")) {
                    let chunk = output.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                }
                let text = String(decoding: buffer, as: UTF8.self)
                continuation.resume(returning: text.split(separator: "\n").first.map(String.init))
            }
        }
    }

    /// Whether reading `output` to its end finished within `timeout`.
    static func readToEnd(_ output: FileHandle, orAfter timeout: Duration) async -> Bool {
        let done = AsyncStream.makeStream(of: Bool.self)
        Thread.detachNewThread {
            _ = output.readDataToEndOfFile()
            done.continuation.yield(true)
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            done.continuation.yield(false)
        }
        defer { timer.cancel() }
        for await ended in done.stream { return ended }
        return false
    }

    /// The processes of process group `group` that are not zombies, once there are none or `waiting` has passed.
    static func livingMembers(ofGroup group: Int32, waiting: Duration) async -> [Int32] {
        let deadline = ContinuousClock.now + waiting
        while true {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            let members = entries.compactMap(Int32.init).filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let name = stat.lastIndex(of: ")")
                else { return false }
                // After the name: state, parent, process group.
                let fields = stat[stat.index(after: name)...].split(separator: " ")
                return fields.count > 2 && fields[0] != "Z" && Int32(fields[2]) == group
            }
            if members.isEmpty || ContinuousClock.now > deadline { return members }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
