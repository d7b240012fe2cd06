import CredentialVault
import Foundation

/// The certificate authorities the child trusts besides the system's: the PEM file named by
/// `CREDENTIAL_VAULT_CA_FILE` (as `credential-vault` reads it), which the proof suites write 0600 into the test's
/// temporary directory when their servers speak https with the test authority.
enum EnvironmentTrustRoots {
    /// The trust roots of `CREDENTIAL_VAULT_CA_FILE`, nil when it is unset; a file that cannot be used ends the
    /// child with the library's reason.
    static let roots: TrustRoots? = {
        guard let path = ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_CA_FILE"], !path.isEmpty else {
            return nil
        }
        do {
            return try TrustRoots(pemFile: path)
        } catch {
            Progress.fail("\(error)")
        }
    }()
}
