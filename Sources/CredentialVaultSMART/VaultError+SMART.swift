import CredentialVault
import Foundation

/// The sentences SMART needs more than once, said with the core's factories where one says the same.
extension VaultError {
    /// SMART discovery (the smart-configuration, then the CapabilityStatement) failed for `why`.
    static func smartDiscoveryFailed(_ why: String, host: String?, status: Int? = nil) -> VaultError {
        .discoveryFailed(why, host: host, status: status, of: "SMART discovery", check: "the FHIR base URL")
    }

    /// `target` (a request's URL, a path) is not under the FHIR base, and the access token goes nowhere else.
    /// - Parameters:
    ///   - refusing: what is refused, before the target (`"the FHIR path"`).
    ///   - target: the URL or path refused; shown printable and bounded.
    ///   - fhirBase: the FHIR base it is not under.
    ///   - host: the host the error concerns.
    /// - Returns: a configuration error.
    static func outsideFHIRBase(_ refusing: String, _ target: String, fhirBase: URL, host: String?) -> VaultError {
        VaultError(
            .invalidConfiguration,
            reason: "Refusing \(refusing) \(printable(target, limit: 200)): it is not under "
                + "\(fhirBase.absoluteString), and the access token goes nowhere else.",
            host: host
        )
    }
}
