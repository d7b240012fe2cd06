import Foundation
import VaultCrypto

/// A user's envelope, unlocked: what a login keeps so that ``Auth`` can seal every rotated refresh token
/// again, and turn device unlock on, without asking for the password. The seam between ``Auth`` and
/// ``UserStorage``.
///
/// Its keys are ``SecureBytes``: zeroed when the last reference goes, that is when the session ends. None of
/// them is derived from the password alone.
struct UnlockedEnvelope: Sendable {
    /// The user the envelope belongs to.
    let userId: String
    /// The key service's key id the envelope was sealed under; a different one on disk means a new password
    /// was set elsewhere.
    let keyId: String
    /// The random key the refresh token is sealed with.
    let dataKey: SecureBytes
    /// The key service's key, for sealing the data key under the device path.
    let serverKey: SecureBytes
    /// The key service's long secret for device unlock, when it sent one.
    let longSecret: SecureBytes?
    /// The envelope file's bytes as read by the password unlock that opened them with ``dataKey`` (nil after a new
    /// key, an upgrade or device unlock): ``UserStorage/verifiedEnvelope(in:under:)`` finds the same bytes on disk checked
    /// already. Not secret: the file's own bytes.
    var openedBytes: Data?
    /// How long the password steps took (for ``Auth/lastLoginTimings``); nil after device unlock or a new key.
    var timings: (keyDerivation: Duration, keyService: Duration)?
}
