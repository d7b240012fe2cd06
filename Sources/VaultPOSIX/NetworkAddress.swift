/// An IPv4 or IPv6 address parsed from its text (`10.0.0.1`, `2001:db8::1`, brackets allowed), as its bytes in
/// network order: 4 for IPv4, 16 for IPv6. The one parser of IP literals: the loopback rule and `no_proxy` use it.
package struct NetworkAddress: Hashable, Sendable {
    /// The address's bytes, most significant first.
    package let bytes: [UInt8]

    /// The address `text` spells, nil when it is not an IP literal.
    package init?(_ text: String) {
        // Only the characters of an IP literal: inet_pton stops at a NUL.
        guard !text.isEmpty,
            text.unicodeScalars.allSatisfy({ "0123456789abcdefABCDEF.:[]".unicodeScalars.contains($0) })
        else { return nil }
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        for (family, count) in [(AF_INET, 4), (AF_INET6, 16)] {
            var bytes = [UInt8](repeating: 0, count: count)
            if inet_pton(family, literal, &bytes) == 1 {
                self.bytes = bytes
                return
            }
        }
        return nil
    }
}
