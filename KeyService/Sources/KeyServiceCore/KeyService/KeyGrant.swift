/// What the key service hands out on success.
package struct KeyGrant: Sendable {
    package let keyId: String
    package let key: [UInt8]
    package let longSecret: String
}
