import Foundation

extension VaultError {
    /// The error for a key-service answer with a status other than 200, as TIM's clients read the statuses.
    static func keyService(status: Int, during call: KeyServiceCall, host: String) -> VaultError {
        switch status {
        case 401 where call == .confirm: .proofRefused(host: host)
        case 409 where call == .keyByPassword: .versionDowngrade(host: host)
        case 404 where call == .createKeyV2: .keyServiceVersionUnsupported(.v2, host: host)
        case 409 where call.isVersion2:
            VaultError(
                .unexpectedAnswer,
                "The key service at \(host) says this key does not speak protocol v2, or is not enrolled (HTTP 409) "
                    + "while \(call.activity). Log in with OpenID Connect again and set a new password.",
                origin: .keyService,
                host: host,
                httpStatus: status
            )
        case 401: .wrongPassword(host: host)
        case 204, 403: .keyLocked(host: host)
        case 404:
            VaultError(
                .keyMissing,
                "The key service at \(host) does not know this key. Log in with OpenID Connect again and set a new "
                    + "password.",
                origin: .keyService,
                host: host,
                httpStatus: status
            )
        case 500...599:
            VaultError(
                .serverRefused,
                "The key service at \(host) failed with a server error (HTTP \(status)) while \(call.activity). "
                    + "Nothing was changed here; try again later.",
                origin: .keyService,
                host: host,
                httpStatus: status
            )
        default:
            VaultError(
                .serverRefused,
                "The key service at \(host) answered HTTP \(status) while \(call.activity), which the key-service "
                    + "protocol does not use. Check the key service URL.",
                origin: .keyService,
                host: host,
                httpStatus: status
            )
        }
    }

    /// A key service (or a ``KeyService`` implementation) that does not speak `version`.
    package static func keyServiceVersionUnsupported(_ version: KeyServiceVersion, host: String? = nil) -> VaultError {
        VaultError(
            .invalidConfiguration,
            "The key service\(host.map { " at \($0)" } ?? "") does not offer key-service protocol \(version). "
                + "Configure the protocol it serves (keyServiceProtocol), or a key service that serves \(version).",
            origin: .keyService,
            host: host
        )
    }

    /// HTTP 409 to a v1 password check: the key speaks protocol v2, so the envelope's header, which says v1, was
    /// changed. Nothing was counted.
    package static func versionDowngrade(host: String?) -> VaultError {
        VaultError(
            .envelopeDidNotOpen,
            "The key service\(host.map { " at \($0)" } ?? "") says this key speaks protocol v2, but the envelope "
                + "asks for a v1 login: its header was changed, and it is refused. Restore the envelope from a backup, "
                + "or log in with OpenID Connect again and set a new password.",
            origin: .keyService,
            host: host,
            httpStatus: 409
        )
    }

    /// HTTP 401 to a v2 proof: the password opened the envelope, but the key service did not take the proof (its
    /// nonce moved on meanwhile: other logins of this key reset it twice). Nothing was counted.
    package static func proofRefused(host: String?) -> VaultError {
        VaultError(
            .serverRefused,
            "The key service\(host.map { " at \($0)" } ?? "") did not accept the proof of the right password (other "
                + "logins of this key went first). Log in again.",
            origin: .keyService,
            host: host,
            httpStatus: 401
        )
    }

    /// HTTP 401 to a password's secret.
    package static func wrongPassword(host: String?) -> VaultError {
        VaultError(
            .wrongPassword,
            "Wrong password. Try again; the key locks after three wrong passwords in a row.",
            origin: .keyService,
            host: host,
            httpStatus: 401
        )
    }

    /// The key service locked the key (or the third wrong password in a row just did).
    package static func keyLocked(host: String?) -> VaultError {
        VaultError(
            .keyLocked,
            "The key service says the key is locked (three wrong passwords in a row); not even the right password "
                + "opens it now. Log in with OpenID Connect again and set a new password.",
            origin: .keyService,
            host: host
        )
    }

    /// The third wrong password in a row on this device: worded as what this device knows.
    package static func keyLockedHere(host: String?) -> VaultError {
        VaultError(
            .keyLockedHere,
            "Wrong password, the third in a row on this device. The key service locks the key on the third, so it "
                + "is most likely locked now; if so, only a new OpenID Connect login and a new password help.",
            origin: .keyService,
            host: host,
            httpStatus: 401
        )
    }

    /// A 200 whose body is not a key.
    static func keyServiceAnswerNotAKey(host: String, during call: KeyServiceCall) -> VaultError {
        VaultError(
            .unexpectedAnswer,
            "The key service at \(host) answered with data that is not a key while \(call.activity). Check the key "
                + "service URL.",
            origin: .keyService,
            host: host,
            httpStatus: 200
        )
    }

    /// A key whose answer lacks the long secret that creating a key or device unlock needs.
    package static func noLongSecret(host: String?) -> VaultError {
        VaultError(
            .unexpectedAnswer,
            "The key service\(host.map { " at \($0)" } ?? "") sent no long secret, which creating a key and device "
                + "unlock need; it does not follow the TIM key-service protocol.",
            origin: .keyService,
            host: host
        )
    }

    /// The key service's key does not fit the envelope (wrong id or size).
    package static var wrongKey: VaultError {
        VaultError(
            .wrongKey,
            "The key service returned a key that does not fit this envelope. Check that the configured key service "
                + "is the one the password was set with.",
            origin: .keyService
        )
    }
}
