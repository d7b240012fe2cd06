/// How a `key` request proves itself: the password-derived secret or the device's long secret.
package enum KeyCredential: Sendable {
    case secret(String)
    case longSecret(String)

    /// The field the credential came in, for logs: never the credential itself.
    package var fieldName: String {
        switch self {
        case .secret: "secret"
        case .longSecret: "longsecret"
        }
    }
}
