import Foundation

extension VaultError {
    /// A DPoP proof was asked for, but the login's tokens are bound to no key.
    package static var notDPoPBound: VaultError {
        VaultError(
            .invalidConfiguration,
            "This login's tokens are not bound to a key (DPoP, RFC 9449): the issuer did not offer DPoP when it was "
                + "made, or DPoP is off. Send the access token as a Bearer token; no proof is needed.",
            origin: .local
        )
    }
}
