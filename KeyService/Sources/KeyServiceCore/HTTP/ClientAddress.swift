package import NIOCore
import VaultPOSIX

/// Who a request comes from, as far as a protocol without client identity can tell: the remote IP address.
///
/// An IPv4 client is its address; an IPv6 client is its /64 network, because one host commonly holds a
/// whole /64 and could otherwise pick a fresh address per request. An IPv4-mapped IPv6 address counts as
/// the IPv4 address it maps. Every client behind one NAT or proxy, and every process on this machine, is
/// one client.
package struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address (`192.0.2.7`) or network (`2001:db8:1:2::/64`), as text.
    package let description: String

    package init(_ description: String) {
        self.description = description
    }

    /// The client behind `address`; a connection without an IP address (a Unix socket) is `unknown`.
    package init(_ address: SocketAddress?) {
        switch address {
        case .v4, .v6:
            self = address?.ipAddress.flatMap { ClientAddress(ipAddress: $0) } ?? ClientAddress("unknown")
        default:
            self.init("unknown")
        }
    }

    /// The client with the IP address `text` (an IPv4 or IPv6 literal, as a proxy's header gives it); nil when
    /// `text` is not one.
    package init?(ipAddress text: String) {
        guard let bytes = NetworkAddress(text)?.bytes else { return nil }
        if bytes.count == 4 {
            self.init(bytes.map(String.init).joined(separator: "."))
            return
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            self.init(bytes[12...].map(String.init).joined(separator: "."))
        } else {
            let groups = stride(from: 0, to: 8, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }
            self.init(groups.joined(separator: ":") + "::/64")
        }
    }

    /// Whether the peer at `address` is on this machine (a proxy whose forwarded-client header may be believed):
    /// loopback by ``Loopback/isAddress(_:)``, or an IPv4-mapped 127.0.0.0/8 address as a dual-stack listener sees
    /// an IPv4 loopback peer. Decided on the address itself, not on the client it counts as: `::2` shares `::1`'s
    /// /64 but is not loopback.
    package static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let text = address?.ipAddress else { return false }
        if Loopback.isAddress(text) { return true }
        guard let bytes = NetworkAddress(text)?.bytes, bytes.count == 16 else { return false }
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
    }
}
