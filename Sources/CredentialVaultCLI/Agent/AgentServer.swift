import CredentialVault
import Foundation
import Synchronization
import VaultPOSIX

/// The agent's socket: a thread of its own accepts connections, and each connection gets a thread for its blocking
/// read and write; only the answer itself (``AgentSession/answer(_:)``) runs in Swift concurrency.
///
/// Every connection's peer is checked with `SO_PEERCRED`: a process of another user is refused and its connection
/// closed before anything is read, whatever the file permissions let through.
///
/// A burst of connections cannot stop it: at most ``maximumConnections`` are served at once (the others wait in
/// the kernel's queue, taking no descriptor here), each request must arrive whole within ``requestDeadline``, and
/// an `accept` that fails for want of descriptors or memory is tried again after a short pause instead of ending
/// the loop.
final class AgentServer: Sendable {
    /// The most connections served at once.
    static let maximumConnections = 32
    /// How long a client has, from the moment its connection is taken, to send its whole request line.
    static let requestDeadline = Duration.seconds(5)

    private let listener: Int32
    private let path: String
    private let session: AgentSession
    private let stopped = Atomic<Bool>(false)
    /// One place per connection served at once.
    private let places = DispatchSemaphore(value: AgentServer.maximumConnections)

    /// Listens at `path` (replacing a socket file nobody serves any more).
    init(path: String, session: AgentSession) throws {
        if try UnixSocket.connect(to: path, timeout: 1).map({ close($0) }) != nil {
            throw CLIError.other("an agent already listens on \(path)")
        }
        unlink(path)
        listener = try UnixSocket.listen(at: path)
        self.path = path
        self.session = session
    }

    /// Starts accepting connections.
    func start() {
        // A thread for the server's life, not a call waited on: started, never joined.
        BlockingThread.start("agent-accept") { [self] in acceptLoop() }
    }

    /// Removes the socket and stops accepting.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        unlink(path)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        let uid = getuid()
        while !stopped.load(ordering: .acquiring) {
            // A place first: beyond the cap, connections wait in the listen queue, not in a thread of ours.
            places.wait()
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                let code = errno
                places.signal()
                if stopped.load(ordering: .acquiring) { return }
                if code == EINTR || code == ECONNABORTED { continue }
                // Out of descriptors (EMFILE, ENFILE) or memory: the connection stays queued; try again shortly,
                // once a served connection has given its descriptor back. Any other failure is retried the same way.
                usleep(code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM ? 50_000 : 200_000)
                continue
            }
            guard PeerCredentials.userID(of: client) == uid else {
                // Another user (or a peer whose credentials cannot be read): nothing is read, nothing is answered.
                close(client)
                places.signal()
                continue
            }
            BlockingThread.start("agent-client") { [self] in
                serve(client)
                places.signal()
            }
        }
    }

    /// One request, one answer, then the connection closes.
    private func serve(_ client: Int32) {
        defer { close(client) }
        UnixSocket.setTimeout(client, seconds: 30)
        let deadline = ContinuousClock.now + Self.requestDeadline
        guard let line = UnixSocket.readLine(client, deadline: deadline) else { return }
        let reply: AgentReply
        if let request = try? UntrustedJSON.decode(AgentRequest.self, from: Data(line)) {
            let handoff = Handoff()
            // This thread is not one of the cooperative pool's: it may wait here for the answer.
            Task { [session] in
                let reply = await session.answer(request)
                let ended = await session.hasEnded
                handoff.reply.withLock { $0 = (reply, ended) }
                handoff.done.signal()
            }
            handoff.done.wait()
            let (answer, ended) = handoff.reply.withLock { $0 } ?? (.failure(CLIError.other("no answer")), false)
            // A session that ended takes its socket along before the client hears of it: the next command
            // finds no agent, never an agent that says it is locked.
            if ended { stop() }
            reply = answer
        } else {
            reply = .failure(CLIError.usage("the agent reads one JSON request per line, such as {\"op\":\"token\"}"))
        }
        UnixSocket.writeLine(client, reply.line)
    }
}

/// An answer passed from the task that computes it to the connection's thread that writes it.
private final class Handoff: Sendable {
    let reply = Mutex<(AgentReply, ended: Bool)?>(nil)
    let done = DispatchSemaphore(value: 0)
}
