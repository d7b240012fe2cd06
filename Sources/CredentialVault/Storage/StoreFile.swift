import Foundation
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
        "\(Hex.encode(SHA256.hash(Data(userId.utf8)))).\(rawValue)"
    }
}
