import Foundation

/// What device unlock keeps on the device: the key service's long secret and the password-derived
/// wrap key, enough to open the envelope without the password (as THP keeps them behind Face ID).
struct DeviceSecret: Codable, Sendable {
    static let currentFormat = "credential-vault/device/v1"

    var format: String
    var userId: String
    var keyId: String
    var longSecret: String
    var wrapKey: String
}
