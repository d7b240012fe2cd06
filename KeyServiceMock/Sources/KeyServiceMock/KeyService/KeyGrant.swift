import Foundation

/// What the key service hands out on success.
struct KeyGrant: Sendable {
    let keyId: String
    let key: Data
    let longSecret: String
}
