package import Foundation

extension VaultError {
    /// No answer from `service` (`the key service`, `the issuer`): unreachable, or not in time.
    package static func network(_ error: TransportError, service: String, origin: Origin) -> VaultError {
        if error.kind == .timedOut {
            return VaultError(
                .timedOut,
                "\(service.prefix(1).uppercased() + service.dropFirst()) at \(error.host) gave no answer "
                    + "(\(error.reason)). Check the connection and try again.",
                origin: origin,
                host: error.host
            )
        }
        if error.kind == .answerTooLarge {
            // The server did answer: a broken or hostile one, which a retry will not change.
            return VaultError(
                .unexpectedAnswer,
                "\(service.prefix(1).uppercased() + service.dropFirst()) at \(error.host) sent an unusable answer: "
                    + "\(error.reason).",
                origin: origin,
                host: error.host
            )
        }
        return VaultError(
            .unreachable,
            "Could not reach \(service) at \(error.host): \(error.reason).",
            origin: origin,
            host: error.host
        )
    }

    /// A URL that would carry secrets in clear.
    package static func insecureURL(_ url: URL, role: String, origin: Origin) -> VaultError {
        VaultError(
            .insecureURL,
            "Refusing \(role) \(printable(url.absoluteString, limit: 300)): secrets may only go over https, or plain http to a loopback "
                + "address (127.0.0.1 or [::1]; the name localhost is not trusted for this).",
            origin: origin,
            host: url.displayHost
        )
    }
}
