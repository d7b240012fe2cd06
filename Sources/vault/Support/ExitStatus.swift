import ArgumentParser
import CredentialVault
import Foundation

/// The exit codes of `vault`, one per thing a script may want to react to (sysexits.h numbering).
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    case usage = 64
    case wrongPassword = 65
    case keyLocked = 66
    case notRegistered = 67
    case loginExpired = 68
    case unavailable = 69
    case failure = 70
    case deviceUnlockRefused = 77
    case configuration = 78
    case interrupted = 130

    /// What the code means, as `--help` and the README list it.
    var meaning: String {
        switch self {
        case .success: "success"
        case .usage: "usage: bad flag or argument, no password to read, new passwords differ"
        case .wrongPassword: "wrong password (the key is not locked yet: retry)"
        case .keyLocked: "key locked after 3 wrong passwords in a row: `vault register` starts over"
        case .notRegistered: "no login stored for the user: run `vault register`"
        case .loginExpired: "stored login expired or revoked at the issuer: run `vault register`"
        case .unavailable: "issuer or key service unreachable (the message names the host)"
        case .failure: "any other failure (damaged store, unexpected answer, ...)"
        case .deviceUnlockRefused: "device unlock off or refused, and no password could be asked"
        case .configuration: "configuration error: unreadable config file, bad URL"
        case .interrupted: "interrupted (Ctrl-C)"
        }
    }

    /// The table for `--help`.
    static var helpTable: String {
        allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n")
    }
}

/// A failure of the command-line layer, with the exit status it ends in.
struct CLIError: Error, CustomStringConvertible {
    let status: ExitStatus
    let description: String

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, description: message) }
    static func configuration(_ message: String) -> CLIError { CLIError(status: .configuration, description: message) }
    static func other(_ message: String) -> CLIError { CLIError(status: .failure, description: message) }

    /// Turns any error into a message for people and an exit status.
    ///
    /// `userId` names the user in the message when known; `attempts` is the count of wrong passwords in a row
    /// recorded so far (for "n more locks it").
    static func from(_ error: any Error, userId: String? = nil, attempts: Int? = nil) -> CLIError {
        if let error = error as? CLIError { return error }
        guard let error = error as? VaultError else {
            return CLIError(status: .failure, description: "\(error)")
        }
        let who = userId.map { " of \($0)" } ?? ""
        if error.isKeyLocked {
            return CLIError(
                status: .keyLocked,
                description: "the key\(who) is locked after three wrong passwords in a row; the stored login can no "
                    + "longer be opened, not even with the right password. Run `vault register` to log in with "
                    + "OpenID Connect again and set a new password."
            )
        }
        if error.isWrongPassword {
            var message = "wrong password\(userId.map { " for \($0)" } ?? ""). Run the command again to retry"
            if let attempts, attempts < 3 {
                let left = 3 - attempts
                message += "; \(left) more wrong password\(left == 1 ? "" : "s") in a row lock\(left == 1 ? "s" : "") "
                message += "the key for good"
            } else {
                message += "; three wrong passwords in a row lock the key for good"
            }
            return CLIError(status: .wrongPassword, description: message + ".")
        }
        switch error {
        case .storage(.noStoredRefreshToken(let user)):
            let name = user.isEmpty ? (userId ?? "") : user
            let subject = name.isEmpty ? "no login is stored yet" : "no login is stored for \(name)"
            return CLIError(
                status: .notRegistered,
                description: "\(subject). Run `vault register` to log in with OpenID Connect and set a password."
            )
        case .auth(.refreshTokenExpired):
            return CLIError(
                status: .loginExpired,
                description: "the issuer no longer accepts the stored login\(who) (the refresh token expired or was "
                    + "revoked). Run `vault register` to log in again."
            )
        case .auth(.networkError),
            .storage(.encryptedStorageFailed(.keyServiceFailed(.badInternet))),
            .storage(.encryptedStorageFailed(.keyServiceFailed(.potentiallyNoInternet))):
            return CLIError(status: .unavailable, description: lowercasedFirst(error.description))
        case .auth(.invalidConfiguration), .auth(.failedToDiscoverConfiguration),
            .storage(.encryptedStorageFailed(.keyServiceFailed(.insecureURL))):
            return CLIError(status: .configuration, description: lowercasedFirst(error.description))
        case .storage(.deviceUnlockFailed):
            return CLIError(status: .deviceUnlockRefused, description: lowercasedFirst(error.description))
        default:
            return CLIError(status: .failure, description: lowercasedFirst(error.description))
        }
    }

    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true else {
            return text
        }
        return first.lowercased() + text.dropFirst()
    }
}

extension ExitCode {
    init(_ status: ExitStatus) {
        self.init(status.rawValue)
    }
}
