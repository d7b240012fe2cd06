/// A key-service call: the one an error happened in, so a message names what was being done, and the key of
/// ``HTTPKeyService``'s URL table.
enum KeyServiceCall: Sendable, CaseIterable {
    /// `createkey`: a new key for a new password.
    case createKey
    /// `key` with the password's secret.
    case keyByPassword
    /// `key` with the device's long secret.
    case keyByDeviceSecret
    /// v2 `createkey`: a new key for a new password, with the evaluation of the blinded password.
    case createKeyV2
    /// v2 `enroll`: the new key's auth key.
    case enroll
    /// v2 `evaluate`: one counted attempt of the blinded password.
    case evaluate
    /// v2 `confirm`: the proof that the password opened the envelope.
    case confirm

    var activity: String {
        switch self {
        case .createKey, .createKeyV2: "creating a key for the new password"
        case .keyByPassword, .evaluate: "checking the password"
        case .keyByDeviceSecret: "checking the device secret"
        case .enroll: "enrolling the new key"
        case .confirm: "confirming the password"
        }
    }

    /// The path below the key service's base of the call's version.
    var path: String {
        switch self {
        case .createKey, .createKeyV2: TIMLayout.createKeyPath
        case .keyByPassword, .keyByDeviceSecret: TIMLayout.keyPath
        case .enroll: "enroll"
        case .evaluate: "evaluate"
        case .confirm: "confirm"
        }
    }

    /// Whether the call is one of protocol v2's (sent below the v2 base).
    var isVersion2: Bool {
        switch self {
        case .createKey, .keyByPassword, .keyByDeviceSecret: false
        case .createKeyV2, .enroll, .evaluate, .confirm: true
        }
    }
}
