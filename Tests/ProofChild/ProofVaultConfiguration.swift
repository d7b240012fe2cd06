import CredentialVault
import Foundation

/// The vault configuration of the child loops that log in (``CrashLoop``, ``RefreshLoop``): client `vault`, a 60 s
/// request timeout, OWASP's floor for Argon2id (the suites' hundreds of runs each derive a few keys), and the
/// certificate authority of `CREDENTIAL_VAULT_CA_FILE` (``EnvironmentTrustRoots``).
enum ProofVaultConfiguration {
    static func make(issuer: URL, keyService: URL, store: String) -> VaultConfiguration {
        var configuration = VaultConfiguration(
            issuer: issuer,
            clientId: "vault",
            keyServiceURL: keyService,
            storeDirectory: URL(fileURLWithPath: store),
            requestTimeout: 60,
            opsLimit: 2,
            memLimitBytes: 19 << 20
        )
        configuration.trustRoots = EnvironmentTrustRoots.roots
        return configuration
    }
}
