import Foundation

extension VaultError {
    /// The user's login was ended on this device by a logout: the envelope is there, its refresh token is not.
    package static func loggedOut(userId: String) -> VaultError {
        VaultError(
            .notRegistered,
            "No login is stored for user '\(userId)': it was logged out on this device. Log in with OpenID Connect "
                + "and set a password again.",
            origin: .store
        )
    }

    /// No envelope for `userId` (empty when no user is stored at all).
    package static func notRegistered(userId: String) -> VaultError {
        VaultError(
            .notRegistered,
            userId.isEmpty
                ? "No login is stored yet. Log in with OpenID Connect and set a password first."
                : "No login is stored for user '\(userId)'. Log in with OpenID Connect and set a password first.",
            origin: .store
        )
    }

    /// Device unlock is off or refused.
    package static func deviceUnlockFailed(_ why: String) -> VaultError {
        VaultError(
            .deviceUnlockFailed,
            "Device unlock failed: \(why). Log in with the password instead.",
            origin: .store
        )
    }

    /// The stored login belongs elsewhere.
    package static func bindingMismatch(userId: String, _ differences: [String]) -> VaultError {
        VaultError(
            .bindingMismatch,
            "The login stored for '\(userId)' belongs to another place than this configuration: "
                + differences.joined(separator: "; ")
                + ". Nothing was sent. Use the configuration it was stored with, or log in with OpenID Connect "
                + "again to store a login for this one.",
            origin: .store
        )
    }

    /// An empty password, or a new one under the minimum length.
    package static func invalidPassword(_ why: String) -> VaultError {
        VaultError(.invalidPassword, "The password is not usable: \(why).", origin: .local)
    }

    /// The user id is not one.
    package static var invalidUserId: VaultError {
        VaultError(.invalidUserId, "The user id must be between 1 and 1024 bytes of UTF-8.", origin: .local)
    }

    /// The envelope did not open with the key the password and the key service gave.
    package static var envelopeDidNotOpen: VaultError {
        VaultError(
            .envelopeDidNotOpen,
            "The stored refresh token did not open: the envelope was changed or belongs to another key. Log in with "
                + "OpenID Connect and set a new password.",
            origin: .store
        )
    }

    /// `path` is open to other users.
    package static func permissionsTooOpen(path: String, mode: UInt32) -> VaultError {
        VaultError(
            .permissionsTooOpen,
            "Refusing to use \(path): its mode is \(String(mode, radix: 8)), which lets other users read or change it. "
                + "Run `chmod go-rwx '\(path)'`.",
            origin: .store
        )
    }

    /// `path` belongs to another user.
    package static func wrongOwner(path: String) -> VaultError {
        VaultError(.wrongOwner, "Refusing to use \(path): it belongs to another user.", origin: .store)
    }

    /// A record of a newer format, left untouched.
    package static func unsupportedFormat(path: String, format: String) -> VaultError {
        VaultError(
            .unsupportedFormat,
            "\(path) holds a record of format '\(format)', which this version cannot read; it was left untouched. "
                + "Use a newer version of CredentialVault.",
            origin: .store
        )
    }

    /// A damaged record, left untouched.
    package static func damagedRecord(path: String, _ why: String) -> VaultError {
        VaultError(
            .damagedRecord,
            "\(path) is damaged (\(why)); it was left untouched. Remove it to log in again with OpenID Connect.",
            origin: .store
        )
    }

    /// A stored record that is intact but not what it should be.
    package static func unexpectedRecord(_ why: String) -> VaultError {
        VaultError(.damagedRecord, "The stored data is not usable: \(why).", origin: .store)
    }

    /// A file-system call failed.
    package static func fileSystem(_ operation: String, path: String, _ why: String) -> VaultError {
        VaultError(.fileSystemFailed, "Could not \(operation) \(path): \(why).", origin: .store)
    }

    /// The file-system call that just failed, with the system's words for `errno`.
    package static func fileSystem(_ operation: String, path: String) -> VaultError {
        fileSystem(operation, path: path, String(cString: strerror(errno)))
    }

    /// The store could not take the space of a new envelope before a refresh: nothing was sent, the login is kept.
    /// `errorNumber` is the errno of the failed call.
    package static func storeCannotReserve(directory: String, bytes: Int, errorNumber: Int32) -> VaultError {
        let why = String(cString: strerror(errorNumber))
        let remedy =
            switch errorNumber {
            case ENOSPC, EDQUOT, EFBIG:
                "Free at least \(bytes) bytes (\(bytes >> 10) KiB) on the file system that holds \(directory)"
            case EROFS: "Make the file system that holds \(directory) writable"
            default: "Make \(directory) writable for this user"
            }
        return VaultError(
            .fileSystemFailed,
            "The store \(directory) cannot take a new envelope (reserving \(bytes) bytes for it failed: \(why)). "
                + "No refresh was sent, so the login is kept. \(remedy), then try again.",
            origin: .store
        )
    }

    /// Another process held the lock at `path` past the wait.
    package static func lockTimeout(path: String, waited: Duration) -> VaultError {
        VaultError(
            .lockTimeout,
            "Another process held the lock \(path) for longer than \(waited.formatted(.units(allowed: [.seconds, .milliseconds]))); "
                + "try again when it is done.",
            origin: .store
        )
    }

    /// The wait was cancelled.
    package static var cancelled: VaultError {
        VaultError(.cancelled, "Cancelled while waiting.", origin: .local)
    }

    /// Argon2id or the AEAD failed.
    package static func cryptoFailed(_ why: String) -> VaultError {
        VaultError(.cryptoFailed, "Key derivation or encryption failed: \(why).", origin: .local)
    }
}
