import ArgumentParser
import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `credential-vault agent`: one unlock, then a background process keeps the session and hands out tokens over a Unix socket,
/// as ssh-agent and gpg-agent do.
struct Agent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Unlock once; a background agent then keeps the session, and `token`, `whoami`, `exec` need no password.",
        discussion: """
            Asks for the password like `credential-vault login` (or uses device unlock when it is on), then starts a \
            background process that holds the logged-in session in memory only, and prints one line: its socket, \
            user and timeouts. `credential-vault token`, `credential-vault whoami` and `credential-vault exec` ask it for a fresh access token while \
            it runs for the same store and user (`--no-agent` unlocks anyway), and unlock by themselves otherwise.

            The socket is $XDG_RUNTIME_DIR/credential-vault/agent-HASH.sock (/tmp/credential-vault-UID/... when \
            XDG_RUNTIME_DIR is unset; when that directory exists and is not yours, \
            $XDG_STATE_HOME/credential-vault/agent/..., and it says so), mode 600 in a directory of mode 700 that \
            must be yours; HASH names the store and the user. The agent answers processes of your own user only (SO_PEERCRED), one JSON line each way: \
            {"op":"token"} gets {"token","userId","expiresAt"}, {"op":"status"} and {"op":"lock"} too; a failure \
            is {"error","exit"}. With --json, `credential-vault agent` prints {"socket", "pid", "userId", "idleTimeout", \
            "maxLifetime" (seconds), "alreadyRunning"}.

            The session ends after --idle-timeout seconds without a token request, after --max-lifetime seconds \
            in all, or with `credential-vault lock` (or SIGTERM): the agent then drops it, removes its socket and exits. When an agent \
            already serves the store and user, this says so and exits 0.
            """,
        aliases: ["unlock"]
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @Option(help: ArgumentHelp("End the session after this many seconds without a request.", valueName: "seconds"))
    var idleTimeout = 600

    @Option(help: ArgumentHelp("End the session this many seconds after the unlock.", valueName: "seconds"))
    var maxLifetime = 7200

    @Flag(
        help: "Print {\"socket\", \"pid\", \"userId\", \"idleTimeout\", \"maxLifetime\", \"alreadyRunning\"} as JSON."
    )
    var json = false

    /// The background process itself: started by `credential-vault agent`, never typed.
    @Flag(help: .private)
    var serve = false

    func validate() throws {
        guard idleTimeout >= 1, maxLifetime >= 1 else {
            throw ValidationError("--idle-timeout and --max-lifetime take a number of seconds, at least 1")
        }
    }

    func run() async throws {
        if serve {
            try await serveSession()
        } else {
            try await launch()
        }
    }

    /// Reads the password here, where the terminal is, and hands it to the background process over a pipe.
    private func launch() async throws {
        let prompt = unlocking.prompt
        var childStatus: Int32?
        try await VaultContext.with(connection, offline: true) { context in
            let environment = ProcessInfo.processInfo.environment
            let userId = try await context.resolveRegisteredUser()
            let address = context.agentAddress(userId: userId, environment: environment)
            if let running = await AgentClient.ask("status", at: address) {
                if json { return Terminal.output(Format.json(report(running, address, alreadyRunning: true))) }
                Terminal.output("An agent already serves \(userId) on \(address.socketPath).")
                return
            }
            try address.prepareDirectory()
            if let reason = address.fallbackReason {
                Terminal.note(
                    "credential-vault: \(reason), so the agent's socket is in \(address.directory.path) instead."
                )
            }
            let deviceUnlockOn = await context.userStorage.hasDeviceUnlock(userId: userId)
            let device = !unlocking.noDeviceUnlock && deviceUnlockOn
            var secret: [UInt8] = device ? [] : Array(try prompt.read("Password for \(userId): ").utf8) + [10]
            defer { for index in secret.indices { secret[index] = 0 } }
            let ready = try await Self.start(
                secret: secret,
                arguments: Array(CommandLine.arguments.dropFirst()) + ["--serve"],
                environment: environment
            )
            switch ready {
            case .ready(let reply) where json:
                Terminal.output(Format.json(report(reply, address, alreadyRunning: false)))
            case .ready(let reply):
                Terminal.output(
                    "Agent started for \(userId) (pid \(reply.pid.map(String.init) ?? "?")) on \(address.socketPath); "
                        + "it ends after \(idleTimeout) s idle, \(maxLifetime) s in all, or `credential-vault lock`."
                )
            case .failed(let status):
                childStatus = status
            }
        }
        // The background process has already said why on standard error.
        if let childStatus { throw ExitCode(childStatus == 0 ? ExitStatus.failure.rawValue : childStatus) }
    }

    /// What `--json` prints about the agent.
    private func report(_ reply: AgentReply, _ address: AgentAddress, alreadyRunning: Bool) -> JSONValue {
        .object([
            "socket": .string(address.socketPath),
            "pid": reply.pid.map { .number(Double($0)) } ?? .null,
            "userId": reply.userId.map { .string($0) } ?? .null,
            "idleTimeout": reply.idleTimeout.map { .number($0) } ?? .null,
            "maxLifetime": reply.maxLifetime.map { .number($0) } ?? .null,
            "alreadyRunning": .bool(alreadyRunning),
        ])
    }

    private enum Start {
        case ready(AgentReply)
        case failed(Int32)
    }

    /// Starts `credential-vault agent --serve` in a session of its own: standard input a pipe with the password line,
    /// standard output a pipe for its ready line, standard error ours until it is ready.
    private static func start(
        secret: [UInt8],
        arguments: [String],
        environment: [String: String]
    ) async throws
        -> Start
    {
        var passwordPipe: [Int32] = [0, 0]
        var readyPipe: [Int32] = [0, 0]
        guard pipe(&passwordPipe) == 0 else { throw UnixSocket.Failure("pipe") }
        guard pipe(&readyPipe) == 0 else {
            close(passwordPipe[0])
            close(passwordPipe[1])
            throw UnixSocket.Failure("pipe")
        }
        // Our ends stay out of the child; the child's ends are dup'ed onto its 0 and 1.
        for fd in [passwordPipe[1], readyPipe[0], passwordPipe[0], readyPipe[1]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                [executable] + arguments,
                environment: environment,
                descriptors: [(0, passwordPipe[0]), (1, readyPipe[1])],
                newSession: true,
                onlyStandardDescriptors: true
            )
        } catch {
            for fd in passwordPipe + readyPipe { close(fd) }
            throw CLIError.other("cannot start the agent: \(error)")
        }
        close(passwordPipe[0])
        close(readyPipe[1])
        let writeEnd = passwordPipe[1]
        let readEnd = readyPipe[0]
        let line = await BlockingThread.run("vault-agent-start") { () -> [UInt8]? in
            signal(SIGPIPE, SIG_IGN)
            var sent = 0
            while sent < secret.count {
                let count = secret.withUnsafeBytes { write(writeEnd, $0.baseAddress! + sent, $0.count - sent) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                sent += count
            }
            close(writeEnd)
            defer { close(readEnd) }
            return UnixSocket.readLine(readEnd)
        }
        if let line, let reply = try? UntrustedJSON.decode(AgentReply.self, from: Data(line)), reply.pid != nil {
            return .ready(reply)
        }
        return .failed(await ChildProcess.wait(pid))
    }

    /// The background process: logs in, listens, writes its ready line, serves until the session ends.
    private func serveSession() async throws {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let idle = Duration.seconds(idleTimeout)
        let lifetime = Duration.seconds(maxLifetime)
        try await VaultContext.with(connection) { context in
            let environment = ProcessInfo.processInfo.environment
            let userId = try await context.resolveRegisteredUser()
            let (token, _) = try await context.unlock(
                userId: userId,
                prompt: PasswordPrompt(fromStandardInput: true),
                allowDeviceUnlock: !unlocking.noDeviceUnlock
            )
            Self.redirectToNull(STDIN_FILENO)
            let address = context.agentAddress(userId: userId, environment: environment)
            try address.prepareDirectory()
            let session = AgentSession(
                auth: context.auth,
                storage: context.userStorage,
                userId: token.userId,
                store: context.storeDirectory.path,
                idleTimeout: idle,
                maxLifetime: lifetime
            )
            let server = try AgentServer(path: address.socketPath, session: session)
            // SIGTERM and SIGINT end the session like `credential-vault lock`: the socket goes with it.
            let signals = [SIGTERM, SIGINT].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number)
                source.setEventHandler { Task { await session.end() } }
                source.resume()
                return source
            }
            defer { for source in signals { source.cancel() } }
            server.start()
            let ready = await session.answer(AgentRequest(op: "status"))
            UnixSocket.writeLine(STDOUT_FILENO, ready.line, pipe: true)
            // From here nothing is printed: the agent's output and errors go to /dev/null.
            Self.redirectToNull(STDOUT_FILENO)
            Self.redirectToNull(STDERR_FILENO)
            while !(await session.endIfExpired()) {
                try? await Task.sleep(for: .milliseconds(200))
            }
            // A refresh that was answered is written before the process goes: SIGTERM must not lose the login.
            await TerminationSignals.waitUntilNothingHeld()
            server.stop()
        }
    }

    private static func redirectToNull(_ fd: Int32) {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        dup2(null, fd)
        close(null)
    }
}
