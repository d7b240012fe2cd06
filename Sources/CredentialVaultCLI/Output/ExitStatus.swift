import ArgumentParser
import CredentialVault
import Foundation

/// The exit codes of `credential-vault`, one per thing a script may want to react to (sysexits.h numbering).
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
    case accessDenied = 79
    case interrupted = 130

    /// What the code means, as `--help` and the CommandLineTool article list it.
    var meaning: String {
        switch self {
        case .success: "success"
        case .usage: "usage: bad flag or argument, no password to read, new passwords differ, a password not UTF-8"
        case .wrongPassword: "wrong password (the key is not locked yet: retry)"
        case .keyLocked: "key locked after 3 wrong passwords in a row: `credential-vault register` starts over"
        case .notRegistered: "no login stored for the user: run `credential-vault register`"
        case .loginExpired: "stored login expired or revoked at the issuer: run `credential-vault register`"
        case .unavailable: "issuer or key service unreachable (the message names the host)"
        case .failure: "any other failure (damaged store, unexpected answer, ...)"
        case .deviceUnlockRefused: "device unlock off or refused, and no password could be asked"
        case .configuration: "configuration error: unreadable config file or one others can write, bad URL"
        case .accessDenied: "the FHIR server refused the request (HTTP 403): the granted scope does not cover it"
        case .interrupted: "interrupted (Ctrl-C)"
        }
    }

    /// The table for `--help`.
    static var helpTable: String {
        allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n")
    }
}

extension ExitStatus {
    /// The statuses a library error can end in, by the question that leads to each, first match wins.
    private static var byQuestion: [(question: KeyPath<VaultError, Bool>, status: ExitStatus)] {
        [
            (\.isKeyLocked, .keyLocked),
            (\.isWrongPassword, .wrongPassword),
            (\.isNotRegistered, .notRegistered),
            (\.isLoginExpired, .loginExpired),
            (\.isDeviceUnlockFailed, .deviceUnlockRefused),
            (\.isNetworkError, .unavailable),
            (\.isLockTimeout, .unavailable),
            (\.isConfigurationError, .configuration),
            (\.isAccessDenied, .accessDenied),
        ]
    }

    /// The status of a library error, computed from its questions only: a kind the library adds later
    /// still lands on the right status when it answers a question, and on `failure` otherwise.
    init(_ error: VaultError) {
        self = Self.byQuestion.first { error[keyPath: $0.question] }?.status ?? .failure
    }
}

extension ExitCode {
    init(_ status: ExitStatus) {
        self.init(status.rawValue)
    }
}
