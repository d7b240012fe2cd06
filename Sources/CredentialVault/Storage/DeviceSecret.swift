import Foundation

/// What device unlock keeps on the device: the key service's long secret and a random device key.
///
/// Nothing in it is derived from the password: a copy of the device confirms no password guess. The device
/// key opens the envelope's device box only together with the key service's key, which the long secret
/// fetches (and which the key service refuses once the key is locked).
struct DeviceSecret: Codable, Sendable {
    /// Version 1 kept the password-derived wrap key; it still opens a version 1 envelope, once.
    static let version1 = "credential-vault/device/v1"
    static let currentFormat = "credential-vault/device/v2"

    var format: String
    var userId: String
    var keyId: String
    var longSecret: String
    /// Version 2: the random device key (base64url).
    var deviceKey: String?
    /// Version 1 only: the password-derived wrap key (base64url). Never written any more.
    var wrapKey: String?
}
