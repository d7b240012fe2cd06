import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's socket: a thread of its own accepts connections, and each connection gets a thread for its blocking
/// read and write; only the answer itself (``AgentSession/answer(_:)``) runs in Swift concurrency.
///
/// Every connection's peer is checked with `SO_PEERCRED`: a process of another user is refused and its connection
/// closed before anything is read, whatever the file permissions let through.
final class AgentServer: Sendable {
    private let listener: Int32
    private let path: String
    private let session: AgentSession
    private let stopped = Atomic<Bool>(false)

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
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "vault-agent-accept"
        thread.start()
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
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            guard UnixSocket.peerUID(client) == uid else {
                // Another user (or a peer whose credentials cannot be read): nothing is read, nothing is answered.
                close(client)
                continue
            }
            let thread = Thread { [self] in serve(client) }
            thread.name = "vault-agent-client"
            thread.start()
        }
    }

    /// One request, one answer, then the connection closes.
    private func serve(_ client: Int32) {
        defer { close(client) }
        UnixSocket.setTimeout(client, seconds: 30)
        guard let line = UnixSocket.readLine(client) else { return }
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
