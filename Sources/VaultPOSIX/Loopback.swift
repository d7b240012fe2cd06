/// The one rule for "is this host loopback?", where plain http is acceptable (RFC 8252 section 8.3).
///
/// Only IP literals count for anything that carries a secret (the issuer, the key service, every
/// discovered endpoint): 127.0.0.0/8 and ::1, parsed as addresses, so `127.0.0.1.attacker.example` is a
/// name like any other. The name `localhost` counts only for a redirect URI, where RFC 8252 section 8.3
/// allows it (and this library listens on 127.0.0.1 for it anyway).
///
/// One rule for the whole package: the client library, the CLI, KeyServiceMock and the key service all ask this
/// one (the key services once kept a copy of their own, which lacked ``NetworkAddress``'s guard against a NUL).
package enum Loopback {
    /// Whether `host` is an IPv4 literal in 127.0.0.0/8 or the IPv6 literal ::1 (brackets allowed).
    package static func isAddress(_ host: String) -> Bool {
        guard let address = NetworkAddress(host) else { return false }
        return address.bytes.count == 4
            ? address.bytes[0] == 127 : address.bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// Whether a redirect URI's host is loopback: a loopback literal, or `localhost` (RFC 8252 section 8.3).
    package static func isRedirectHost(_ host: String) -> Bool {
        host.lowercased() == "localhost" || isAddress(host)
    }
}
