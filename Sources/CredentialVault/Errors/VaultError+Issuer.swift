package import Foundation

extension VaultError {
    /// `invalid_grant` to a refresh: the stored login is dead.
    package static var loginExpired: VaultError { loginExpired(saying: nil) }

    /// The stored login is dead (`invalid_grant`, or a bare 400/401 to a refresh); `words` are the server's
    /// own, shown cut to a printable line when there are any.
    package static func loginExpired(saying words: String?) -> VaultError {
        let said = words.map { printable($0, limit: 200) }.flatMap { $0.isEmpty ? nil : " The issuer said: \"\($0)\"." }
        return VaultError(
            .loginExpired,
            "The issuer no longer accepts the stored login (the refresh token expired or was revoked). Log in with "
                + "OpenID Connect again.\(said ?? "")",
            origin: .issuer
        )
    }

    /// No session: log in first.
    package static var notLoggedIn: VaultError {
        VaultError(.notLoggedIn, "Not logged in. Log in with the password first.", origin: .local)
    }

    /// The session holds no unlocked envelope to work with.
    package static var noUnlockedEnvelope: VaultError {
        VaultError(
            .noUnlockedEnvelope,
            "The session keeps no unlocked envelope: it began with storeNewRefreshToken: false, or with OpenID "
                + "Connect before a password was set. Log in with the password (or set one) first.",
            origin: .local
        )
    }

    /// The token endpoint answered an error status (other than `invalid_grant`).
    /// - Parameters:
    ///   - status: the HTTP status of the answer.
    ///   - errorCode: the answer's OAuth `error`; nil when its body had none.
    ///   - host: the issuer's host, named in the description.
    ///   - saying: the issuer's `error_description` of a refused client authentication, which names the rule the
    ///     client broke (a missing `kid`, an algorithm it does not take); shown printable and bounded.
    /// - Returns: a ``VaultError`` from the issuer, with `status` as its ``VaultError/httpStatus``.
    package static func tokenRequestRefused(
        status: Int,
        errorCode: String?,
        host: String,
        saying: String? = nil
    ) -> VaultError {
        let words = saying.map { ": \(printable($0, limit: 300))" } ?? ""
        let code = errorCode.map { " (\(printable($0))\(words))" } ?? ""
        // RFC 6749 section 5.2: the client's own authentication failed.
        let hint =
            errorCode == "invalid_client"
            ? " The issuer does not accept this client's authentication: a confidential client needs its secret or "
                + "private key configured, a public one none." : ""
        return VaultError(
            .serverRefused,
            "The token endpoint at \(host) refused the request with HTTP \(status)\(code).\(hint)",
            origin: .issuer,
            host: host,
            httpStatus: status
        )
    }

    /// A 200 from the token endpoint that is not a usable token answer.
    package static func tokenAnswerUnusable(_ why: String, host: String?) -> VaultError {
        VaultError(
            .unexpectedAnswer,
            "The token endpoint\(host.map { " at \($0)" } ?? "") gave no usable access token: \(why).",
            origin: .issuer,
            host: host,
            httpStatus: 200
        )
    }

    /// The token endpoint gave no refresh token.
    package static var noRefreshToken: VaultError {
        VaultError(
            .noRefreshToken,
            "The token endpoint gave no refresh token; ask for the offline_access scope.",
            origin: .issuer
        )
    }

    /// Discovery failed for `why`.
    /// - Parameters:
    ///   - why: what was wrong, a clause (`"its token_endpoint is not a URL"`).
    ///   - host: the host asked, when known.
    ///   - status: the HTTP status of the answer, when one came.
    ///   - discovery: the discovery that failed, for another than the issuer's (`"SMART discovery"`).
    ///   - check: the setting to check, for another than the issuer's (`"the FHIR base URL"`).
    /// - Returns: a ``VaultError`` of kind `discoveryFailed`, from the issuer.
    package static func discoveryFailed(
        _ why: String,
        host: String? = nil,
        status: Int? = nil,
        of discovery: String = "OpenID Connect discovery",
        check: String = "the issuer URL"
    ) -> VaultError {
        VaultError(
            .discoveryFailed,
            "\(discovery) failed: \(why). Check \(check).",
            origin: .issuer,
            host: host,
            httpStatus: status
        )
    }

    /// The issuer could not serve its discovery document now (HTTP 5xx, or 429): the server's failure, which
    /// says nothing about the configuration.
    package static func discoveryUnavailable(_ url: URL, status: Int) -> VaultError {
        VaultError(
            .serverRefused,
            "The issuer at \(url.displayHost) could not serve its discovery document (HTTP \(status)): a failure of "
                + "the server, not of the configuration. Try again later.",
            origin: .issuer,
            host: url.displayHost,
            httpStatus: status
        )
    }

    /// The OpenID Connect login failed for `why` (at `host`, when one server is to blame).
    package static func openIDConnectFailed(_ why: String, host: String? = nil) -> VaultError {
        VaultError(.openIDConnectFailed, "The OpenID Connect login failed: \(why).", origin: .issuer, host: host)
    }

    /// Revocation at logout failed for `why`; local data was cleared as asked.
    package static func revocationFailed(_ why: String, host: String? = nil, status: Int? = nil) -> VaultError {
        VaultError(
            .revocationFailed,
            "Logged out here, but the issuer refused to revoke the refresh token: \(why). The token stays valid at "
                + "the issuer until it expires.",
            origin: .issuer,
            host: host,
            httpStatus: status
        )
    }

    /// The issuer offers no revocation endpoint: logged out here only.
    package static var revocationNotOffered: VaultError {
        VaultError(
            .revocationFailed,
            "Logged out here, but the issuer offers no revocation endpoint (RFC 7009), so the refresh token was not "
                + "revoked: it stays valid at the issuer until it expires.",
            origin: .issuer
        )
    }

    /// Revocation at logout got no answer; local data was cleared as asked. A network error.
    package static func revocationUnreachable(_ error: TransportError) -> VaultError {
        let network = VaultError.network(error, service: "the issuer's revocation endpoint", origin: .issuer)
        return VaultError(
            network.kind,
            "Logged out here, but the refresh token was not revoked: \(network.reason) The token stays valid at the "
                + "issuer until it expires.",
            origin: .issuer,
            host: error.host
        )
    }

    /// The configuration is not usable for `why`.
    package static func invalidConfiguration(_ why: String) -> VaultError {
        VaultError(.invalidConfiguration, "The configuration is not usable: \(why).", origin: .local)
    }

    /// A server's own words, cut to a line of printable ASCII so it cannot forge or flood a message.
    package static func printable(_ text: String, limit: Int = 64) -> String {
        let kept = text.unicodeScalars.prefix(limit).filter { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }
        return String(String.UnicodeScalarView(kept))
    }
}

extension VaultError {
    /// The issuer refused or garbled a registration call (RFC 7591, RFC 7592); `why` in words, never a secret.
    package static func registrationFailed(_ why: String, host: String?, status: Int?) -> VaultError {
        VaultError(
            .registrationFailed,
            "Dynamic client registration failed: \(why).",
            origin: .issuer,
            host: host,
            httpStatus: status
        )
    }
}
