/// A key-service failure, as TIM's clients map the wire protocol (`TIMKeyServiceError`).
public enum KeyServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 401: the secret derived from the password is wrong.
    case badPassword
    /// 204 or 403: the key is locked after three wrong passwords in a row.
    case keyLocked
    /// 404: the key service does not know this key id.
    case keyMissing
    /// 500: the key service could not create a key.
    case unableToCreateKey
    /// No HTTP response came back, twice (the call is retried once in that case only).
    case badInternet(host: String, reason: String)
    /// The request timed out.
    case potentiallyNoInternet(host: String)
    /// A 200 whose body is not the expected JSON.
    case unableToDecode
    /// The answer has no `longsecret` where one is needed (create key, device unlock).
    case responseHasNoLongSecret
    /// Any other status.
    case unknown(status: Int)
    /// The key service URL is not https and not a loopback host.
    case insecureURL(host: String)

    public var description: String {
        switch self {
        case .badPassword: "Wrong password. Try again; the key locks after three wrong passwords in a row."
        case .keyLocked:
            "The key is locked after three wrong passwords. Log in with OpenID Connect again and set a new password."
        case .keyMissing:
            "The key service does not know this key; log in with OpenID Connect again and set a new password."
        case .unableToCreateKey: "The key service could not create a key (HTTP 500). Try again later."
        case .badInternet(let host, let reason): "Could not reach the key service at \(host): \(reason)."
        case .potentiallyNoInternet(let host):
            "The key service at \(host) did not answer in time. Check the connection."
        case .unableToDecode: "The key service answered with data that is not a key. Check the key service URL."
        case .responseHasNoLongSecret: "The key service answer lacks the long secret needed here."
        case .unknown(let status): "The key service answered with unexpected HTTP status \(status)."
        case .insecureURL(let host):
            "Refusing to talk to the key service at \(host) without https; only loopback hosts may use http."
        }
    }
}

/// A failure of the on-disk envelope store.
public enum SecureStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store directory or a file in it is readable or writable by others.
    case permissionsTooOpen(path: String, mode: UInt32)
    /// The store directory or a file in it belongs to another user.
    case wrongOwner(path: String)
    /// An envelope of a format this version does not know (written by a newer version); it is left untouched.
    case unsupportedFormat(path: String, format: String)
    /// An envelope that is not valid JSON of the expected shape.
    case corruptRecord(path: String, reason: String)
    /// A file-system call failed.
    case ioFailed(operation: String, path: String, reason: String)

    public var description: String {
        switch self {
        case .permissionsTooOpen(let path, let mode):
            "Refusing to use \(path): its mode is \(String(mode, radix: 8)), which lets other users read or change it. "
                + "Run `chmod go-rwx '\(path)'`."
        case .wrongOwner(let path): "Refusing to use \(path): it belongs to another user."
        case .unsupportedFormat(let path, let format):
            "\(path) holds a record of format '\(format)', which this version cannot read; it was left untouched. "
                + "Use a newer version of CredentialVault."
        case .corruptRecord(let path, let reason):
            "\(path) is damaged (\(reason)); it was left untouched. Remove it to log in again with OpenID Connect."
        case .ioFailed(let operation, let path, let reason): "Could not \(operation) \(path): \(reason)."
        }
    }
}
