#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule, in this module, for "is this host loopback?": where the server may listen without
/// an explicit opt-in, and which redirect URIs match on any port (RFC 8252 section 7.3).
///
/// Addresses are parsed, not compared as text: 127.0.0.0/8 and ::1 count, so `127.0.0.1.example.com` is a
/// name like any other. The same rule as CredentialVault's `Loopback` (this module cannot import it).
enum Loopback {
    /// Whether `host` is an IPv4 literal in 127.0.0.0/8 or the IPv6 literal ::1 (brackets allowed).
    static func isAddress(_ host: String) -> Bool {
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, literal, &ipv4) == 1 {
            return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127
        }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, literal, &ipv6) == 1 {
            return withUnsafeBytes(of: &ipv6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
        }
        return false
    }

    /// Whether a redirect URI's host is loopback: a loopback literal, or `localhost` (RFC 8252 section 8.3).
    static func isRedirectHost(_ host: String) -> Bool {
        host.lowercased() == "localhost" || isAddress(host)
    }
}
