import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for "is this host loopback?", where plain http is acceptable (RFC 8252 section 8.3).
///
/// Only IP literals count for anything that carries a secret (the issuer, the key service, every
/// discovered endpoint): 127.0.0.0/8 and ::1, parsed as addresses, so `127.0.0.1.attacker.example` is a
/// name like any other. The name `localhost` counts only for a redirect URI, where RFC 8252 section 8.3
/// allows it (and this library listens on 127.0.0.1 for it anyway).
enum Loopback {
    /// Whether `host` is an IPv4 literal in 127.0.0.0/8 or the IPv6 literal ::1 (brackets allowed).
    static func isAddress(_ host: String) -> Bool {
        // Only the characters of an IP literal: inet_pton stops at a NUL, so `127.0.0.1%00.attacker.example`
        // must not get that far.
        guard !host.isEmpty,
            host.unicodeScalars.allSatisfy({ "0123456789abcdefABCDEF.:[]".unicodeScalars.contains($0) })
        else { return false }
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
