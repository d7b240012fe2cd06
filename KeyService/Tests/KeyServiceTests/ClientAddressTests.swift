import KeyServiceCore
import NIOCore
import Testing

/// Which peer counts as a proxy on this machine (whose forwarded-client header is believed), and which client a
/// request counts against.
@Suite("Client addresses")
struct ClientAddressTests {
    @Test(
        "a peer is loopback by its own address: 127.0.0.0/8, ::1 and IPv4-mapped 127.x, nothing else in ::1's /64",
        arguments: [
            ("127.0.0.1", true), ("127.200.0.9", true), ("::1", true), ("::ffff:127.0.0.1", true),
            ("::2", false), ("::", false), ("::8.8.8.8", false), ("::ffff:10.0.0.1", false), ("10.0.0.1", false),
            ("128.0.0.1", false), ("2001:db8::1", false),
        ]
    )
    func loopbackPeer(address: String, loopback: Bool) throws {
        let peer = try SocketAddress(ipAddress: address, port: 443)
        #expect(ClientAddress.isLoopback(peer) == loopback)
    }

    @Test("a peer without an IP address (a Unix socket, or none) is never loopback")
    func noAddress() throws {
        #expect(!ClientAddress.isLoopback(nil))
        #expect(!ClientAddress.isLoopback(try SocketAddress(unixDomainSocketPath: "/tmp/keyservice.sock")))
    }

    @Test("an IPv6 client counts as its /64, an IPv4-mapped one as its IPv4 address")
    func clientOfAddress() throws {
        #expect(
            ClientAddress(try SocketAddress(ipAddress: "2001:db8:1:2::7", port: 1)).description == "2001:db8:1:2::/64"
        )
        #expect(ClientAddress(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1)).description == "192.0.2.7")
        #expect(ClientAddress(try SocketAddress(ipAddress: "192.0.2.7", port: 1)).description == "192.0.2.7")
    }

    /// A forwarded-client header's text goes through the package's one IP-literal parser: before it did, this
    /// module kept its own copy of the rule, and `inet_pton` read `127.0.0.1\u{0}.attacker.example` as 127.0.0.1.
    @Test(
        "a forwarded client is an IP literal and nothing else: no NUL, no name, no port",
        arguments: [
            "127.0.0.1\u{0}.attacker.example", "::1\u{0}x", "localhost", "127.0.0.1.attacker.example",
            "127.0.0.1:80", "", " 127.0.0.1",
        ]
    )
    func notALiteral(text: String) {
        #expect(ClientAddress(ipAddress: text) == nil)
    }

    @Test("a forwarded client literal counts as its address, or its /64 for IPv6")
    func forwardedLiteral() {
        #expect(ClientAddress(ipAddress: "192.0.2.7")?.description == "192.0.2.7")
        #expect(ClientAddress(ipAddress: "[2001:db8:1:2::7]")?.description == "2001:db8:1:2::/64")
        #expect(ClientAddress(ipAddress: "::ffff:10.1.2.3")?.description == "10.1.2.3")
    }
}
