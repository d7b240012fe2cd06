/// The key-service call an error happened in, so a message names what was being done.
enum KeyServiceCall: Sendable {
    /// `createkey`: a new key for a new password.
    case createKey
    /// `key` with the password's secret.
    case keyByPassword
    /// `key` with the device's long secret.
    case keyByDeviceSecret

    var activity: String {
        switch self {
        case .createKey: "creating a key for the new password"
        case .keyByPassword: "checking the password"
        case .keyByDeviceSecret: "checking the device secret"
        }
    }
}
