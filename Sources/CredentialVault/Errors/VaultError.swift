/// Every error the public API throws: THP's `THPError` shape, with `auth` and `storage` sides.
///
/// Descriptions say what happened and what to do; they never contain a password, key or token.
/// Ask the helpers (``isWrongPassword``, ``isKeyLocked``, ...) rather than matching deep cases.
public enum VaultError: Error, Sendable, CustomStringConvertible {
    /// Logging in, refreshing or logging out failed.
    case auth(AuthError)
    /// Storing or opening a refresh token failed.
    case storage(StorageError)

    /// The key service said the password is wrong (HTTP 401). Fewer than three wrong passwords in a row so far.
    public var isWrongPassword: Bool {
        if case .keyServiceFailed(.badPassword) = encryptedStorageError { return true }
        return false
    }

    /// The key is locked after three wrong passwords in a row; only a new login and a new password help.
    public var isKeyLocked: Bool {
        if case .keyServiceFailed(.keyLocked) = encryptedStorageError { return true }
        return false
    }

    /// Any failure that came from the key service (including network failures reaching it).
    public var isKeyServiceError: Bool {
        if case .keyServiceFailed = encryptedStorageError { return true }
        return false
    }

    /// Device unlock (THP's biometric login) is not enabled, or its secret no longer opens the key.
    public var isDeviceUnlockFailed: Bool {
        if case .storage(.deviceUnlockFailed) = self { return true }
        return false
    }

    private var encryptedStorageError: EncryptedStorageError? {
        if case .storage(.encryptedStorageFailed(let error)) = self { return error }
        return nil
    }

    public var description: String {
        switch self {
        case .auth(let error): error.description
        case .storage(let error): error.description
        }
    }
}

/// Why storing or opening a refresh token failed (THP's `THPStorageError`).
public enum StorageError: Error, Sendable, CustomStringConvertible {
    /// The encrypted storage (envelope, key service or file store) failed.
    case encryptedStorageFailed(EncryptedStorageError)
    /// No refresh token is stored for this user.
    case noStoredRefreshToken(userId: String)
    /// Device unlock is not enabled for this user, or it no longer opens the key.
    case deviceUnlockFailed(reason: String)
    /// The user id is empty or too long to be a user id.
    case invalidUserId

    public var description: String {
        switch self {
        case .encryptedStorageFailed(let error): error.description
        case .noStoredRefreshToken(let userId):
            "No refresh token is stored for user '\(userId)'. Log in with OpenID Connect and set a password first."
        case .deviceUnlockFailed(let reason):
            "Device unlock failed: \(reason). Log in with the password instead."
        case .invalidUserId: "The user id must be between 1 and 1024 bytes of UTF-8."
        }
    }
}

/// The encrypted-storage layer (TIM's `TIMEncryptedStorageError`).
public enum EncryptedStorageError: Error, Sendable, CustomStringConvertible {
    /// Sealing the refresh token failed.
    case failedToEncryptData
    /// The envelope did not open: it was changed, or the key service returned a key that is not this envelope's.
    case failedToDecryptData
    /// The key service returned a key of the wrong size or for another key id.
    case invalidEncryptionKey
    /// The key service call failed.
    case keyServiceFailed(KeyServiceError)
    /// Reading or writing the envelope store failed.
    case secureStorageFailed(SecureStorageError)
    /// The stored data is not what this user's envelope should hold.
    case unexpectedData(reason: String)

    public var description: String {
        switch self {
        case .failedToEncryptData: "Sealing the refresh token failed."
        case .failedToDecryptData:
            "The stored refresh token did not open: the envelope was changed or belongs to another key. "
                + "Log in with OpenID Connect and set a new password."
        case .invalidEncryptionKey:
            "The key service returned a key that does not fit this envelope; check that the configured key service is the one the password was set with."
        case .keyServiceFailed(let error): error.description
        case .secureStorageFailed(let error): error.description
        case .unexpectedData(let reason): "The stored data is not usable: \(reason)."
        }
    }
}
