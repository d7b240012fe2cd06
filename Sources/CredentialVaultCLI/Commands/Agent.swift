import ArgumentParser
import CredentialVault
import Foundation
import VaultPOSIX

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

            With --profile given more than once, or --all-profiles (every named profile of the config file), one \
            process serves each profile on that profile's own socket: one password per profile, in order (with \
            --password-stdin, one line each), one line printed per profile (--json: an array, each with its \
            "profile"). `lock --profile NAME` ends that profile's session; the process ends with the last one.
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

    @Flag(help: "Serve every named profile of the config file (one password each, in the order of their names).")
    var allProfiles = false

    /// The background process itself: started by `credential-vault agent`, never typed.
    @Flag(help: .private)
    var serve = false

    /// For the background process of several profiles: the ones it serves (those no agent served yet), in order.
    @Option(name: .customLong("serve-profile"), help: .private)
    var serveProfiles: [String] = []

    func validate() throws {
        guard idleTimeout >= 1, maxLifetime >= 1 else {
            throw ValidationError("--idle-timeout and --max-lifetime take a number of seconds, at least 1")
        }
        guard !allProfiles || connection.profiles.isEmpty else {
            throw ValidationError("--all-profiles serves every profile: give it without --profile")
        }
    }

    /// Whether this agent serves several profiles (`--profile` more than once, or `--all-profiles`).
    ///
    /// Several profiles are served by one process, each on its own socket (``AgentAddress``, from that profile's
    /// store and user), not by one socket with the profile in each request: every client (`token`, the helpers,
    /// `lock`, `status`) already finds its agent from its own settings, so nothing changes for them, a
    /// single-profile agent stays what it was, and `lock --profile NAME` ends that profile's session alone.
    private var servesSeveral: Bool { allProfiles || connection.profiles.count > 1 }

    /// The connection options of each profile served, in order (one for a single-profile agent: the options as given).
    private func servedConnections() throws -> [ConnectionOptions] {
        if !serveProfiles.isEmpty { return serveProfiles.map { connection.withProfile($0) } }
        guard servesSeveral else { return [connection] }
        var names: [String] = []
        if allProfiles {
            names = try Command.catching { try Settings.configFileContents(options: connection).profileNames }
            guard !names.isEmpty else {
                throw Command.fail(
                    CLIError.configuration("--all-profiles: the config file has no named profiles (its \"profiles\")")
                )
            }
        } else {
            for name in connection.profiles where !names.contains(name) { names.append(name) }
        }
        return names.map { connection.withProfile($0) }
    }

    func run() async throws {
        if serve {
            try await serveSession()
        } else {
            try await launch()
        }
    }

    /// One profile `launch` starts: its user, its socket, and the password line for the background process (empty
    /// with device unlock).
    private struct Pending {
        let profile: String?
        let userId: String
        let address: AgentAddress
        var secret: [UInt8]
    }

    /// Reads the passwords here, where the terminal is (one per profile, in order), and hands them to the background
    /// process over a pipe, one line each.
    private func launch() async throws {
        let prompt = unlocking.prompt
        let several = servesSeveral
        var pending: [Pending] = []
        defer {
            for index in pending.indices {
                for byte in pending[index].secret.indices { pending[index].secret[byte] = 0 }
            }
        }
        var reports: [JSONValue] = []
        for options in try servedConnections() {
            let profile = options.profiles.first
            let named = several ? " (profile \(profile ?? "-"))" : ""
            try await VaultContext.with(options, offline: true) { context in
                let environment = ProcessInfo.processInfo.environment
                let userId = try await context.resolveRegisteredUser()
                let address = context.agentAddress(userId: userId, environment: environment)
                // Two profiles with one store, user, issuer and client are one login: one socket cannot serve both.
                if let twin = pending.first(where: { $0.address.socketPath == address.socketPath }) {
                    throw CLIError.configuration(
                        "the profiles \(twin.profile ?? "(default)") and \(profile ?? "(default)") are one login (the same "
                            + "store, user, issuer and client): serve one of them"
                    )
                }
                if let running = await AgentClient.ask("status", at: address) {
                    if json {
                        reports.append(report(running, address, alreadyRunning: true, profile: several ? profile : nil))
                        return
                    }
                    Terminal.output("An agent already serves \(userId)\(named) on \(address.socketPath).")
                    return
                }
                try address.prepareDirectory()
                if let reason = address.fallbackReason, pending.isEmpty {
                    Terminal.note(
                        "credential-vault: \(reason), so the agent's socket is in \(address.directory.path) instead."
                    )
                }
                let deviceUnlockOn = await context.userStorage.hasDeviceUnlock(userId: userId)
                let device = !unlocking.noDeviceUnlock && deviceUnlockOn
                let secret: [UInt8] =
                    device ? [] : Array(try prompt.read("Password for \(userId)\(named): ").utf8) + [10]
                pending.append(Pending(profile: profile, userId: userId, address: address, secret: secret))
            }
        }
        guard !pending.isEmpty else {
            if json { Terminal.output(Format.json(several ? .array(reports) : reports[0])) }
            return
        }
        var arguments = Array(CommandLine.arguments.dropFirst()) + ["--serve"]
        if several { arguments += pending.flatMap { ["--serve-profile", $0.profile ?? ""] } }
        // One buffer of all the password lines, sized once (growing it would leave copies), zeroed after use.
        var secrets: [UInt8] = []
        secrets.reserveCapacity(pending.reduce(0) { $0 + $1.secret.count })
        for entry in pending { secrets.append(contentsOf: entry.secret) }
        defer { for index in secrets.indices { secrets[index] = 0 } }
        let ready = try await Self.start(
            secret: secrets,
            arguments: arguments,
            environment: ProcessInfo.processInfo.environment
        )
        switch ready {
        case .ready(let reply):
            for started in pending {
                if json {
                    reports.append(
                        report(
                            reply,
                            started.address,
                            alreadyRunning: false,
                            profile: several ? started.profile : nil,
                            userId: several ? started.userId : nil
                        )
                    )
                    continue
                }
                let named = several ? " (profile \(started.profile ?? "-"))" : ""
                Terminal.output(
                    "Agent started for \(started.userId)\(named) (pid \(reply.pid.map(String.init) ?? "?")) on "
                        + "\(started.address.socketPath); it ends after \(idleTimeout) s idle, \(maxLifetime) s in all, "
                        + "or `credential-vault lock`."
                )
            }
            if json { Terminal.output(Format.json(several ? .array(reports) : reports[0])) }
        case .failed(let status):
            // The background process has already said why on standard error.
            throw ExitCode(status == 0 ? ExitStatus.failure.rawValue : status)
        }
    }

    /// What `--json` prints about the agent.
    /// With several profiles, each object also names its `profile`, and the objects are printed as one array.
    private func report(
        _ reply: AgentReply,
        _ address: AgentAddress,
        alreadyRunning: Bool,
        profile: String? = nil,
        userId: String? = nil
    ) -> JSONValue {
        var object: [String: JSONValue] = [
            "socket": .string(address.socketPath),
            "pid": reply.pid.map { .number(Double($0)) } ?? .null,
            "userId": reply.userId.map { .string($0) } ?? .null,
            "idleTimeout": reply.idleTimeout.map { .number($0) } ?? .null,
            "maxLifetime": reply.maxLifetime.map { .number($0) } ?? .null,
            "alreadyRunning": .bool(alreadyRunning),
        ]
        if let profile { object["profile"] = .string(profile) }
        // The ready line is the first profile's: the others name their own user.
        if let userId { object["userId"] = .string(userId) }
        return .object(object)
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
        let line = await BlockingThread.run("agent-start") { () -> [UInt8]? in
            // A child that died before reading gets no SIGPIPE through to us: its failure is read below instead.
            signal(SIGPIPE, SIG_IGN)
            _ = StreamSocket.writeAll(writeEnd, secret, pipe: true)
            close(writeEnd)
            defer { close(readEnd) }
            return UnixSocket.readLine(readEnd)
        }
        if let line, let reply = try? UntrustedJSON.decode(AgentReply.self, from: Data(line)), reply.pid != nil {
            return .ready(reply)
        }
        return .failed(await ChildProcess.wait(pid))
    }

    /// One unlocked profile of the background process.
    private struct Unlocked {
        let context: VaultContext
        /// The user as resolved from the store (names the socket).
        let userId: String
        /// The user of the unlocked login.
        let loginUserId: String
    }

    /// Unlocks each of `remaining` in order (a password line each from standard input, or device unlock), keeping
    /// every context open, then runs `body` with them all.
    private func withUnlocked(
        _ remaining: ArraySlice<ConnectionOptions>,
        _ opened: [Unlocked] = [],
        _ body: ([Unlocked]) async throws -> Void
    ) async throws {
        guard let options = remaining.first else { return try await body(opened) }
        try await VaultContext.with(options) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, _) = try await context.unlock(
                userId: userId,
                prompt: PasswordPrompt(fromStandardInput: true),
                allowDeviceUnlock: !unlocking.noDeviceUnlock
            )
            let unlocked = Unlocked(context: context, userId: userId, loginUserId: token.userId)
            try await withUnlocked(remaining.dropFirst(), opened + [unlocked], body)
        }
    }

    /// The background process: logs in (each profile), listens (a socket each), writes its ready line, serves until
    /// every session has ended.
    private func serveSession() async throws {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let idle = Duration.seconds(idleTimeout)
        let lifetime = Duration.seconds(maxLifetime)
        let connections = try servedConnections()
        try await withUnlocked(connections[...]) { unlocked in
            let environment = ProcessInfo.processInfo.environment
            Self.redirectToNull(STDIN_FILENO)
            var served: [(session: AgentSession, server: AgentServer)] = []
            for profile in unlocked {
                let address = profile.context.agentAddress(userId: profile.userId, environment: environment)
                try address.prepareDirectory()
                let session = AgentSession(
                    auth: profile.context.auth,
                    storage: profile.context.userStorage,
                    userId: profile.loginUserId,
                    store: profile.context.storeDirectory.path,
                    idleTimeout: idle,
                    maxLifetime: lifetime
                )
                do {
                    served.append((session, try AgentServer(path: address.socketPath, session: session)))
                } catch {
                    for (_, server) in served { server.stop() }
                    throw error
                }
            }
            let sessions = served.map(\.session)
            // SIGTERM and SIGINT end every session like `credential-vault lock`: the sockets go with them.
            let signals = [SIGTERM, SIGINT].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number)
                source.setEventHandler { Task { for session in sessions { await session.end() } } }
                source.resume()
                return source
            }
            defer { for source in signals { source.cancel() } }
            for (_, server) in served { server.start() }
            guard let first = sessions.first else { return }
            let ready = await first.answer(AgentRequest(op: "status"))
            UnixSocket.writeLine(STDOUT_FILENO, ready.line, pipe: true)
            // From here nothing is printed: the agent's output and errors go to /dev/null.
            Self.redirectToNull(STDOUT_FILENO)
            Self.redirectToNull(STDERR_FILENO)
            // Each session ends on its own (`lock --profile NAME` ends one); the process goes with the last.
            while true {
                var ended: [AgentServer] = []
                var live = 0
                for entry in served {
                    if await entry.session.endIfExpired() { ended.append(entry.server) } else { live += 1 }
                }
                if live == 0 { break }
                // A session that ended while others go on gives its socket back now.
                for server in ended { server.stop() }
                try? await Task.sleep(for: .milliseconds(200))
            }
            // A refresh that was answered is written before the process goes: SIGTERM must not lose the login.
            await TerminationSignals.waitUntilNothingHeld()
            for (_, server) in served { server.stop() }
        }
    }

    private static func redirectToNull(_ fd: Int32) {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        dup2(null, fd)
        close(null)
    }
}
