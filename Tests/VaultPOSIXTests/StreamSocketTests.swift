import Testing
import VaultPOSIX

@Suite("Stream sockets with poll and deadline")
struct StreamSocketTests {
    /// A connected pair of Unix-domain stream sockets.
    static func pair() -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends)
        precondition(made == 0, "socketpair")
        return (ends[0], ends[1])
    }

    @Test("what one end writes whole, the other reads")
    func writeThenRead() {
        let (left, right) = Self.pair()
        defer {
            close(left)
            close(right)
        }
        #expect(StreamSocket.writeAll(left, Array("hello".utf8)))
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = StreamSocket.read(right, into: &buffer, until: .now + .seconds(30))
        #expect(Array(buffer.prefix(max(count, 0))) == Array("hello".utf8))
    }

    @Test("a read whose deadline passes with nothing sent returns 0")
    func deadlinePasses() {
        let (left, right) = Self.pair()
        defer {
            close(left)
            close(right)
        }
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(StreamSocket.read(right, into: &buffer, until: .now + .milliseconds(5)) == 0)
    }

    @Test("a write to a closed peer fails instead of raising SIGPIPE")
    func closedPeer() {
        let (left, right) = Self.pair()
        close(right)
        defer { close(left) }
        // The test process may ignore SIGPIPE (TestProcess.ignoreBrokenPipes), which would hide one: blocked on this
        // thread, a SIGPIPE the write raised stays pending (Linux never discards a blocked signal), and is seen.
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        #expect(!StreamSocket.writeAll(left, [UInt8](repeating: 1, count: 1 << 20)))
        var pending = sigset_t()
        sigpending(&pending)
        let raised = sigismember(&pending, SIGPIPE) == 1
        #expect(!raised, "the write raised SIGPIPE")
        if raised {
            // Taken off before the mask is restored, so that it does not end the test process.
            var signal: Int32 = 0
            sigwait(&pipeOnly, &signal)
        }
    }

    @Test("the peer of a socket is this process's user")
    func peerCredentials() {
        let (left, right) = Self.pair()
        defer {
            close(left)
            close(right)
        }
        #expect(PeerCredentials.userID(of: left) == getuid())
    }

    @Test("poll timeouts round up to whole milliseconds, never short of the deadline")
    func milliseconds() {
        #expect(Poll.milliseconds(.zero) == 0)
        #expect(Poll.milliseconds(.milliseconds(-3)) == 0)
        #expect(Poll.milliseconds(.nanoseconds(1)) == 1)
        #expect(Poll.milliseconds(.milliseconds(1)) == 1)
        #expect(Poll.milliseconds(.microseconds(1_001)) == 2)
        #expect(Poll.milliseconds(.seconds(2)) == 2_000)
    }
}
