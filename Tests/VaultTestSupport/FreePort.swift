import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 that was free a moment ago, and a way to hold one busy.
///
/// Shared by the test targets that start servers of their own on a port they choose (the interop provider,
/// PostgreSQL, nginx, keyservice instances).
public enum FreePort {
    /// A port that was free a moment ago, taken below Linux's ephemeral range (32768 and up): every other
    /// listener in these tests binds port 0 and gets an ephemeral one, so none of them can take it in between.
    /// Never the same port twice in one process: two suites running at once could otherwise both be handed a port
    /// before either binds it (a fresh clone's fast tier once saw nginx fail with EADDRINUSE).
    /// - Throws: ``Unavailable`` when 200 picks were all taken.
    public static func pick() throws -> UInt16 {
        for _ in 0..<200 {
            let port = UInt16.random(in: 20_000..<32_000)
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if (try? Held(port: port)) != nil { return port }
        }
        throw Unavailable(description: "no free port below 32000")
    }

    /// Every port ``pick()`` has tried in this process.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// A socket listening on 127.0.0.1 at a port of the system's choice, until it is released.
    public final class Held {
        /// The port it listens at.
        public let port: UInt16
        private let fd: Int32

        /// Listens at `port`; 0 lets the system pick.
        /// - Throws: ``Unavailable`` when the port cannot be bound.
        public init(port: UInt16 = 0) throws {
            #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard fd >= 0 else { throw Unavailable(description: "socket failed") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0, listen(fd, 1) == 0 else {
                close(fd)
                throw Unavailable(description: "bind failed")
            }
            var actual = sockaddr_in()
            var actualLength = length
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
            }
            self.fd = fd
            self.port = UInt16(bigEndian: actual.sin_port)
        }

        deinit { close(fd) }
    }

    /// No port could be had; the description says why.
    public struct Unavailable: Error, CustomStringConvertible {
        /// Why.
        public let description: String
    }
}
