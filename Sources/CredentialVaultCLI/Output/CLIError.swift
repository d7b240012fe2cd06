import ArgumentParser
import CredentialVault
import Foundation

/// A failure of the command-line layer, with the exit status it ends in.
struct CLIError: Error, CustomStringConvertible {
    let status: ExitStatus
    let description: String

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, description: message) }
    static func configuration(_ message: String) -> CLIError { CLIError(status: .configuration, description: message) }
    static func other(_ message: String) -> CLIError { CLIError(status: .failure, description: message) }

    /// Turns any error into a message for people and an exit status.
    ///
    /// The status of a ``VaultError`` is computed from its questions only (``ExitStatus/init(_:)``), never
    /// from its kind. `userId` names the user in the message when known; `attempts` is the count of wrong
    /// passwords in a row recorded so far when this device knows it whole (for "n more locks it"), nil when not.
    static func from(_ error: any Error, userId: String? = nil, attempts: Int? = nil) -> CLIError {
        if let error = error as? CLIError { return error }
        guard let error = error as? VaultError else {
            return CLIError(status: .failure, description: "\(error)")
        }
        let status = ExitStatus(error)
        let who = userId.map { " of \($0)" } ?? ""
        switch status {
        case .keyLocked where error.isKeyLockConfirmed:
            return CLIError(
                status: status,
                description: "the key service says the key\(who) is locked after three wrong passwords in a row; the "
                    + "stored login can no longer be opened, not even with the right password. Run `credential-vault register` "
                    + "to log in with OpenID Connect again and set a new password."
            )
        case .keyLocked:
            return CLIError(
                status: status,
                description:
                    "wrong password\(userId.map { " for \($0)" } ?? ""), the third in a row on this device: the "
                    + "key service locks the key on the third, so it is most likely locked now. If the right password "
                    + "is refused too, run `credential-vault register` to log in with OpenID Connect again and set a new password."
            )
        case .wrongPassword:
            var message = "wrong password\(userId.map { " for \($0)" } ?? ""). Run the command again to retry"
            if let attempts, attempts < 3 {
                let left = 3 - attempts
                message += "; \(left) more wrong password\(left == 1 ? "" : "s") in a row lock\(left == 1 ? "s" : "") "
                message += "the key for good"
            } else {
                // This device has not seen every attempt (its count was lost, or never kept): no number it could
                // give is sure, and the key service may have counted this one as the third.
                message +=
                    "; the key service locks the key after three wrong passwords in a row and may already have "
                    + "locked it (this device does not know how many were tried)"
            }
            return CLIError(status: status, description: message + ".")
        case .notRegistered:
            let subject = userId.map { "no login is stored for \($0)" } ?? "no login is stored yet"
            return CLIError(
                status: status,
                description:
                    "\(subject). Run `credential-vault register` to log in with OpenID Connect and set a password."
            )
        case .loginExpired:
            return CLIError(
                status: status,
                description: "the issuer no longer accepts the stored login\(who) (the refresh token expired or was "
                    + "revoked). Run `credential-vault register` to log in again."
            )
        default:
            return CLIError(status: status, description: lowercasedFirst(error.description))
        }
    }

    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true else {
            return text
        }
        return first.lowercased() + text.dropFirst()
    }
}
