import VaultPOSIX

/// A `no_proxy` address entry: an address with an optional CIDR prefix length (`10.0.0.0/8`, `2001:db8::/32`),
/// read as curl reads it: without a length, or with `/0`, the entry is that one address.
struct NetworkPrefix: Hashable, Sendable {
    /// The network's address.
    let address: NetworkAddress
    /// How many leading bits of an address must equal the network's.
    let bits: Int

    /// The prefix `entry` spells, nil when it is not an address with an optional `/bits` in range.
    init?(_ entry: String) {
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = NetworkAddress(String(parts[0])) else { return nil }
        let width = address.bytes.count * 8
        var bits = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...width).contains(given) else { return nil }
            bits = given == 0 ? width : given
        }
        self.address = address
        self.bits = bits
    }

    /// Whether `other` lies in this network (an address of the other family never does).
    func contains(_ other: NetworkAddress) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        for index in 0..<(bits + 7) / 8 {
            let remaining = bits - index * 8
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if other.bytes[index] & mask != address.bytes[index] & mask { return false }
        }
        return true
    }
}
