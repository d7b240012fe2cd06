import CredentialVault
import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The agent under a burst of connections, a client that drips its request, a logout, and a socket directory in /tmp
/// that another user took first: it keeps serving, cuts what takes too long, ends with the login, and finds a place of
/// its own.
@Suite("credential-vault agent: floods, slow clients, logout and a hijacked /tmp directory", .tags(.cli))
struct AgentResilienceTests {
    static let password = AgentTests.password

    @Test("a flood of connections past the agent's descriptor limit does not stop it: the next token works")
    func flood() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            // The agent (and so its background process) starts with at most 64 descriptors.
            let started = try await CLISandbox.run(
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", "ulimit -n 64 && exec \"$0\" \"$@\"", CLISandbox.vaultBinary.path, "agent",
                    "--password-stdin",
                ],
                stdin: "\(Self.password)\n",
                environment: sandbox.environment,
                in: sandbox.root
            )
            let agent = try AgentTests.runningAgent(from: started)
            do {
                let baseline = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.pid)/fd"))?.count
                // Connections that send nothing, more than the agent has descriptors for, opened for 8 seconds while
                // the agent takes them from its queue; each connect is non-blocking, so one that finds the queue
                // full fails and is tried again a moment later.
                var flood: [Int32] = []
                let until = ContinuousClock.now + .seconds(8)
                while flood.count < 400, ContinuousClock.now < until {
                    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                    guard fd >= 0 else { break }
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    if Self.connect(fd, to: agent.socket) {
                        flood.append(fd)
                    } else {
                        close(fd)
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                print("flood: \(flood.count) connections; the agent had \(baseline ?? -1) descriptors open before")
                #expect(flood.count > 64, "the flood went past the agent's limit: \(flood.count) connections")
                for fd in flood { close(fd) }
                // `timeout` is the hang guard: an agent that stopped accepting made this wait without limit.
                let token = try await CLISandbox.run(
                    executable: URL(fileURLWithPath: "/usr/bin/timeout"),
                    arguments: ["120", CLISandbox.vaultBinary.path, "token"],
                    stdin: "",
                    environment: sandbox.environment,
                    in: sandbox.root
                )
                #expect(token.status == 0, "\(token.status): \(token.stderr)")
                #expect(token.stderr.isEmpty, "served by the agent, nothing said: \(token.stderr)")
                #expect((try? JWT(token: token.stdout.trimmingCharacters(in: .newlines)))?.userId == "demo-user")
            } catch {
                await AgentTests.end(agent, sandbox)
                throw error
            }
            await AgentTests.end(agent, sandbox)
        }
    }

    @Test("a client that sends its request one byte every 2 seconds is cut off before it gets an answer")
    func slowDrip() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { agent in
                let client = """
                    import select, socket, sys
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.settimeout(90)
                    s.connect(sys.argv[1])
                    for byte in b'{"op":"token"}\\n':
                        try:
                            s.sendall(bytes([byte]))
                        except OSError:
                            print("closed"); sys.exit(0)
                        ready, _, _ = select.select([s], [], [], 2)
                        if ready:
                            try:
                                data = s.recv(65536)
                            except OSError:
                                data = b""
                            print("answer" if data else "closed"); sys.exit(0)
                    data = s.recv(65536)
                    print("answer" if data else "closed")
                    """
                let drip = try await sandbox.runPython(client, arguments: [agent.socket])
                #expect(drip.stdout.hasPrefix("closed"), "the agent cut the request: \(drip.stdout)\(drip.stderr)")
                let token = try await sandbox.run(["token"])
                #expect(token.status == 0, "the agent serves others all the same: \(token.stderr)")
            }
        }
    }

    @Test("logout ends the user's agent first: afterwards token is refused and sends no token request")
    func logoutEndsAgent() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { agent in
                let served = try await sandbox.run(["token"])
                #expect(served.status == 0, "\(served.stderr)")
                let logout = try await sandbox.run(["logout", "--password-stdin"], stdin: "\(Self.password)\n")
                #expect(logout.status == 0, "\(logout.stderr)")
                #expect(!FileManager.default.fileExists(atPath: agent.socket), "the agent's socket is gone")
                try await AgentTests.waitUntilGone(agent.pid)
                #expect(!AgentTests.isRunning(agent.pid), "the agent process ended")
                let before = log.tokenRequests
                let token = try await sandbox.run(["token"])
                #expect(token.status == 67, "\(token.status): \(token.stdout)\(token.stderr)")
                #expect(token.stdout.isEmpty, "no token is printed")
                #expect(token.stderr.contains("no login is stored"), "\(token.stderr)")
                #expect(log.tokenRequests == before, "no request reached the token endpoint")
            }
        }
    }

    @Test("a logout the agent never heard of (its socket not found) still stops it handing out its cached token")
    func logoutUnheardByAgent() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration()) { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { agent in
                let served = try await sandbox.run(["token"])
                #expect(served.status == 0, "\(served.stderr)")
                // Another runtime directory: this logout cannot find the agent, so only the store learns of it.
                let elsewhere = sandbox.root.appending(path: "other-runtime")
                try FileManager.default.createDirectory(
                    at: elsewhere,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
                let logout = try await sandbox.run(
                    ["logout", "--password-stdin"],
                    stdin: "\(Self.password)\n",
                    environment: ["XDG_RUNTIME_DIR": elsewhere.path]
                )
                #expect(logout.status == 0, "\(logout.stderr)")
                #expect(AgentTests.isRunning(agent.pid), "the logout did not reach the agent")
                let before = log.tokenRequests
                let token = try await sandbox.run(["token"])
                #expect(token.status == 67, "\(token.status): \(token.stdout)\(token.stderr)")
                #expect(token.stdout.isEmpty, "a token was printed after the logout")
                #expect(log.tokenRequests == before, "no request reached the token endpoint")
            }
        }
    }

    @Test(
        "when another user owns /tmp/credential-vault-UID, the agent starts under the state directory and says so",
        .enabled(if: getuid() == 0, "handing a directory to uid 65534 needs root")
    )
    func hijackedTemporaryDirectory() async throws {
        let shared = "/tmp/credential-vault-\(getuid())"
        var existing = stat()
        guard lstat(shared, &existing) != 0 else {
            print("SKIPPED: \(shared) exists already; this test does not touch a directory it did not make")
            return
        }
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            // Another local user was first.
            try #require(mkdir(shared, 0o755) == 0)
            defer { rmdir(shared) }
            try #require(chown(shared, 65534, 65534) == 0)
            // No XDG_RUNTIME_DIR, a short state directory (a socket path must stay under 108 bytes).
            let state = sandbox.runtime.appending(path: "state").path
            let environment = ["XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": state]
            let started = try await sandbox.run(
                ["agent", "--password-stdin"],
                stdin: "\(Self.password)\n",
                environment: environment
            )
            #expect(started.status == 0, "\(started.status): \(started.stderr)")
            #expect(started.stderr.contains("belongs to uid 65534"), "\(started.stderr)")
            let fallback = state + "/credential-vault/agent"
            #expect(started.stderr.contains(fallback), "\(started.stderr)")
            let agent = try AgentTests.runningAgent(from: started)
            do {
                #expect(agent.socket.hasPrefix(fallback + "/"), "\(agent.socket)")
                #expect(try AgentTests.mode(fallback) == 0o700)
                let token = try await sandbox.run(["token"], environment: environment)
                #expect(token.status == 0, "the clients find it there too: \(token.stderr)")
                #expect(token.stderr.isEmpty, "\(token.stderr)")
                let lock = try await sandbox.run(["lock"], environment: environment)
                #expect(lock.stdout.contains("Locked"), "\(lock.stdout)\(lock.stderr)")
            } catch {
                kill(agent.pid, SIGKILL)
                throw error
            }
            try await AgentTests.waitUntilGone(agent.pid)
            if AgentTests.isRunning(agent.pid) { kill(agent.pid, SIGKILL) }
        }
    }

    /// A non-blocking connect to `path`: true when it connected (or is connecting).
    private static func connect(_ fd: Int32, to path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 || errno == EINPROGRESS
    }
}
