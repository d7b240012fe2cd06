#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule, in the key services, for "is this host loopback?": where the server may listen without
/// an explicit opt-in, and which redirect URIs match on any port (RFC 8252 section 7.3).
///
/// Addresses are parsed, not compared as text: 127.0.0.0/8 and ::1 count, so `127.0.0.1.example.com` is a
/// name like any other. The same rule as CredentialVault's `Loopback` (this module cannot import it).
package enum Loopback {
    /// Whether `host` is an IPv4 literal in 127.0.0.0/8 or the IPv6 literal ::1 (brackets allowed).
    package static func isAddress(_ host: String) -> Bool {
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if let ipv4 = addressBytes(literal, family: AF_INET, count: 4) {
            return ipv4[0] == 127
        }
        if let ipv6 = addressBytes(literal, family: AF_INET6, count: 16) {
            return ipv6 == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }

    /// The bytes of `text` parsed as an address of `family` (network order), `nil` when it is not one.
    package static func addressBytes(_ text: String, family: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        return inet_pton(family, text, &bytes) == 1 ? bytes : nil
    }

    /// Whether a redirect URI's host is loopback: a loopback literal, or `localhost` (RFC 8252 section 8.3).
    package static func isRedirectHost(_ host: String) -> Bool {
        host.lowercased() == "localhost" || isAddress(host)
    }
}
