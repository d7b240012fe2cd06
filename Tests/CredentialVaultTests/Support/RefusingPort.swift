import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 that refuses every connection: bound, so no other test can take it, but not listening.
enum RefusingPort {
    /// Runs `body` with `http://127.0.0.1:{port}`, a base URL nothing answers at; the port is freed on return.
    static func with<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (URL) async throws -> Result
    ) async throws -> Result {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw FixtureError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw FixtureError("bind failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw FixtureError("getsockname failed") }
        return try await body(URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!)
    }
}
