import Foundation
import Synchronization
import VaultCrypto

/// The kinds of file the store keeps per user, and the one rule for their names: a user id is untrusted
/// input and never becomes a file name; the name is the id's SHA-256 in hex, with the kind as extension.
enum StoreFile: String, CaseIterable {
    /// The sealed refresh token (``Envelope``).
    case envelope = "vault"
    /// Device unlock's secret (``DeviceSecret``), in the default ``FileDeviceSecretStore``.
    case device = "device"
    /// The count of wrong passwords in a row.
    case attempts = "attempts"

    /// `{sha256(userId)}.{kind}`.
    func name(userId: String) -> String {
        "\(Self.hashedName(userId)).\(rawValue)"
    }

    /// The last user id named and its hash in hex: a login names its user's files five times, and right after
    /// Argon2id, with every cache cold, the first hash took about 35 µs (issue 23).
    private static let lastHashed = Mutex<(userId: String, hex: String)?>(nil)

    private static func hashedName(_ userId: String) -> String {
        // By bytes, as the hash reads them: `==` on String takes canonically equivalent ids (an "é" of one code
        // point or two) as equal, and these name different files.
        if let last = lastHashed.withLock({ $0 }), last.userId.utf8.elementsEqual(userId.utf8) { return last.hex }
        let hex = Hex.encode(SHA256.hash(Data(userId.utf8)))
        lastHashed.withLock { $0 = (userId, hex) }
        return hex
    }
}
