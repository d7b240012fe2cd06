extension VaultError {
    /// The user denied the device login at the issuer (RFC 8628 `access_denied`).
    package static func authorizationDenied(host: String) -> VaultError {
        VaultError(
            .authorizationDenied,
            "The device login was denied at the issuer (access_denied): nothing was stored. Start again and approve "
                + "it, if that was a mistake.",
            origin: .issuer,
            host: host
        )
    }

    /// The device code expired before the user approved (RFC 8628 `expired_token`, or its `expires_in` passed).
    package static func deviceCodeExpired(host: String?) -> VaultError {
        VaultError(
            .deviceCodeExpired,
            "The device login expired before it was approved (expired_token): nothing was stored. Start again, and "
                + "enter the new code in time.",
            origin: .issuer,
            host: host
        )
    }

    /// The issuer offers no device authorization (no `device_authorization_endpoint` in its discovery).
    package static func deviceAuthorizationNotOffered(issuer: String) -> VaultError {
        VaultError(
            .invalidConfiguration,
            "The issuer \(issuer) offers no device login (its discovery lists no device_authorization_endpoint, "
                + "RFC 8628). Log in with the browser instead (without --device; --no-browser works from another "
                + "device).",
            origin: .issuer
        )
    }
}
