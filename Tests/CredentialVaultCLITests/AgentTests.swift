import CredentialVault
import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `credential-vault agent` and `credential-vault lock` over the built binary and real sockets: one unlock, then tokens without a
/// password and without a request to the issuer while the access token is fresh; only the same user is answered.
@Suite("credential-vault agent: one unlock, tokens over a private socket, lock and timeouts", .tags(.cli))
struct AgentTests {
    static let password = "correct horse"

    @Test("after one password, 20 token calls need no password and send no token request; lock ends the agent")
    func tokensWithoutPassword() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await Self.register(sandbox)
            try await Self.withAgent(sandbox) { agent in
                let before = log.tokenRequests
                var tokens: Set<String> = []
                for _ in 0..<20 {
                    let token = try await sandbox.run(["token"])
                    #expect(token.status == 0, "\(token.stderr)")
                    #expect(token.stderr.isEmpty, "nothing extra is said: \(token.stderr)")
                    tokens.insert(token.stdout)
                }
                #expect(tokens.count == 1, "the fresh access token is handed out again")
                #expect(try JWT(token: tokens.first!.trimmingCharacters(in: .newlines)).userId == "demo-user")

                let json = try await sandbox.run(["token", "--json"])
                #expect(json.status == 0, "\(json.stderr)")
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
                )
                #expect(object["token"] as? String == tokens.first?.trimmingCharacters(in: .newlines))
                #expect(object["userId"] as? String == "demo-user")
                #expect(object["expiresAt"] is NSNumber)

                let whoami = try await sandbox.run(["whoami"])
                #expect(whoami.status == 0, "\(whoami.stderr)")
                #expect(whoami.stdout.contains("unlocked with the agent"))
                #expect(log.tokenRequests == before, "no request reached the token endpoint")

                let noAgent = try await sandbox.run(["token", "--no-agent"])
                #expect(noAgent.status == 64, "--no-agent unlocks here, which needs a password: \(noAgent.stderr)")

                let lock = try await sandbox.run(["lock"])
                #expect(lock.status == 0, "\(lock.stderr)")
                #expect(lock.stdout.contains("Locked"))
                #expect(
                    !FileManager.default.fileExists(atPath: agent.socket),
                    "the socket is removed before lock returns"
                )
                try await Self.waitUntilGone(agent.pid)

                let after = try await sandbox.run(["token"])
                #expect(after.status == 64, "without the agent a password is needed again: \(after.stderr)")
                #expect(after.stderr.contains("--password-stdin"))
                let again = try await sandbox.run(["lock"])
                #expect(again.status == 0)
                #expect(again.stderr.contains("no agent runs"))
            }
        }
    }

    @Test("the socket is 0600 in a 0700 directory; a second agent for the same store and user is not started")
    func modesAndSecondAgent() async throws {
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            try await Self.withAgent(sandbox) { agent in
                let directory = sandbox.runtime.appending(path: "credential-vault").path
                #expect(try Self.mode(directory) == 0o700)
                #expect(try Self.mode(agent.socket) == 0o600)
                #expect(agent.socket.hasPrefix(directory + "/"))

                let second = try await sandbox.run(["agent"])
                #expect(second.status == 0, "\(second.stderr)")
                #expect(second.stdout.contains("already serves"))
            }
        }
    }

    @Test("a directory for the sockets that is not 0700 is refused")
    func openDirectoryRefused() async throws {
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            let directory = sandbox.runtime.appending(path: "credential-vault")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            chmod(directory.path, 0o755)
            let agent = try await sandbox.run(["agent", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(agent.status == 78, "\(agent.stderr)")
            #expect(agent.stderr.contains("700"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test("a wrong password starts no agent and exits 65")
    func wrongPassword() async throws {
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            let agent = try await sandbox.run(["agent", "--password-stdin"], stdin: "wrong\n")
            #expect(agent.status == 65, "\(agent.stderr)")
            let directory = sandbox.runtime.appending(path: "credential-vault").path
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty)
        }
    }

    @Test("a client of another uid is refused by the SO_PEERCRED check, even when the socket lets it connect")
    func otherUserRefused() async throws {
        let setpriv = "/usr/bin/setpriv"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) else {
            print("SKIPPED: switching to uid 65534 needs root and \(setpriv)")
            return
        }
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            try await Self.withAgent(sandbox) { agent in
                let directory = sandbox.runtime.appending(path: "credential-vault").path
                // Open the way for everyone, so only the agent's own check stands between uid 65534 and a token.
                chmod(sandbox.runtime.path, 0o755)
                chmod(directory, 0o711)
                chmod(agent.socket, 0o666)
                defer {
                    chmod(agent.socket, 0o600)
                    chmod(directory, 0o700)
                    chmod(sandbox.runtime.path, 0o700)
                }
                let client = """
                    import socket, sys
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.settimeout(20)
                    try:
                        s.connect(sys.argv[1])
                    except OSError as e:
                        print("connect failed", e); sys.exit(3)
                    try:
                        s.sendall(b'{"op":"token"}\\n')
                        answer = s.recv(65536)
                    except OSError as e:
                        print("closed", type(e).__name__); sys.exit(0)
                    print("answer" if answer else "closed", len(answer))
                    """
                let script = sandbox.runtime.appending(path: "client.py")
                try Data(client.utf8).write(to: script)
                chmod(script.path, 0o644)
                let asRoot = try await CLISandbox.run(
                    executable: URL(fileURLWithPath: "/usr/bin/env"),
                    arguments: ["python3", "-I", script.path, agent.socket],
                    stdin: "",
                    environment: sandbox.environment,
                    in: sandbox.root
                )
                #expect(
                    asRoot.stdout.hasPrefix("answer"),
                    "the same uid gets an answer: \(asRoot.stdout)\(asRoot.stderr)"
                )
                let asNobody = try await CLISandbox.run(
                    executable: URL(fileURLWithPath: setpriv),
                    arguments: [
                        "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "python3", "-I",
                        script.path, agent.socket,
                    ],
                    stdin: "",
                    environment: sandbox.environment,
                    in: sandbox.root
                )
                #expect(asNobody.status == 0, "\(asNobody.stdout)\(asNobody.stderr)")
                #expect(asNobody.stdout.hasPrefix("closed"), "connected, then refused: \(asNobody.stdout)")
            }
        }
    }

    @Test("with --idle-timeout 1 the agent ends by itself and removes its socket")
    func idleTimeout() async throws {
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            try await Self.withAgent(sandbox, arguments: ["--idle-timeout", "1"]) { agent in
                // A generous bound: the test asserts that it ends, not how fast.
                for _ in 0..<300 where FileManager.default.fileExists(atPath: agent.socket) {
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(!FileManager.default.fileExists(atPath: agent.socket))
                try await Self.waitUntilGone(agent.pid)
                #expect(!Self.isRunning(agent.pid), "the agent process exited")
            }
        }
    }

    @Test("exec takes the token from the agent (no password) and passes the command's exit status through")
    func execWithAgent() async throws {
        try await withSandbox { sandbox in
            try await Self.register(sandbox)
            try await Self.withAgent(sandbox) { _ in
                let exec = try await sandbox.run(["exec", "--", "sh", "-c", "test -n \"$ACCESS_TOKEN\" && exit 7"])
                #expect(exec.status == 7, "\(exec.stderr)")
                let printed = try await sandbox.run(["exec", "--", "sh", "-c", "printf %s \"$ACCESS_TOKEN\""])
                let token = try await sandbox.run(["token"])
                #expect(printed.stdout == token.stdout.trimmingCharacters(in: .newlines))
            }
        }
    }

    // MARK: Helpers

    static func register(_ sandbox: CLISandbox, arguments: [String] = []) async throws {
        let register = try await sandbox.run(
            ["register", "--unattended", "--password-stdin"] + arguments,
            stdin: "\(password)\n"
        )
        try #require(register.status == 0, "\(register.stderr)")
    }

    /// A running agent: its pid and socket, from the line `credential-vault agent` prints.
    struct RunningAgent {
        let pid: pid_t
        let socket: String
    }

    /// Starts an agent with the password on standard input, runs `body`, and always ends the agent (lock, then
    /// SIGKILL by pid), so none outlives the test.
    static func withAgent(
        _ sandbox: CLISandbox,
        arguments: [String] = [],
        _ body: (RunningAgent) async throws -> Void
    ) async throws {
        let started = try await sandbox.run(["agent", "--password-stdin"] + arguments, stdin: "\(password)\n")
        let agent = try runningAgent(from: started)
        do {
            try await body(agent)
        } catch {
            await end(agent, sandbox)
            throw error
        }
        await end(agent, sandbox)
    }

    /// The agent a `credential-vault agent` run started, from the line it printed.
    static func runningAgent(from started: CLIResult) throws -> RunningAgent {
        try #require(started.status == 0, "\(started.stderr)")
        let line = started.stdout
        let pid = try #require(
            line.firstRange(of: "(pid ").flatMap { range in
                pid_t(line[range.upperBound...].prefix { $0.isNumber })
            },
            "\(line)"
        )
        let socket = try #require(
            line.firstRange(of: " on ").map { range in String(line[range.upperBound...].prefix { $0 != ";" }) }
        )
        return RunningAgent(pid: pid, socket: socket)
    }

    /// Ends `agent`: lock, then SIGKILL by pid when it still runs.
    static func end(_ agent: RunningAgent, _ sandbox: CLISandbox) async {
        if FileManager.default.fileExists(atPath: agent.socket) { _ = try? await sandbox.run(["lock"]) }
        try? await waitUntilGone(agent.pid)
        if isRunning(agent.pid) { kill(agent.pid, SIGKILL) }
    }

    /// Waits (up to 30 s) until `pid` no longer runs.
    static func waitUntilGone(_ pid: pid_t) async throws {
        for _ in 0..<300 where isRunning(pid) {
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Whether `pid` runs: the agent is not our child, and a zombie nobody reaps yet has exited all the same.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
