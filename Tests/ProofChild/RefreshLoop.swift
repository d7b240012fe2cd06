import CredentialVault
import Foundation
import VaultCrypto

/// The signal suite's workload: a password login, then forced refreshes one after another, each rotating the refresh
/// token, until a signal ends the process. It installs ``TerminationSignals`` at start, as the CLI does.
///
/// Standard input: the password, then the fingerprint key (base64). Lines: `ready`; `requesting N`,
/// `received N FINGERPRINT` (from ``ProgressTransport``) and `sealed N` once the call that rotated token N returned.
///
/// With `--no-signal-guard` it leaves the signals as they are: the defect the suite must catch.
enum RefreshLoop {
    static func run(_ arguments: [String]) async {
        var arguments = arguments
        let unguarded = arguments.contains("--no-signal-guard")
        arguments.removeAll { $0 == "--no-signal-guard" }
        guard arguments.count == 4, let issuer = URL(string: arguments[0]), let keyService = URL(string: arguments[1])
        else { Progress.fail("usage: refresh-loop ISSUER KEY_SERVICE STORE USER_ID [--no-signal-guard]", status: 64) }
        if !unguarded { TerminationSignals.install() }
        let password = Progress.readInput("the password")
        let key: SecureBytes
        do {
            key = try SecureBytes(base64Encoded: Progress.readInput("the fingerprint key"))
        } catch {
            Progress.fail("the fingerprint key is not base64")
        }
        let transport = ProgressTransport(fingerprintKey: key)
        do throws(VaultError) {
            let configuration = ProofVaultConfiguration.make(
                issuer: issuer,
                keyService: keyService,
                store: arguments[2]
            )
            let vault = try Vault(configuration: configuration, transport: transport)
            let auth = vault.auth
            Progress.say("ready")
            _ = try await auth.loginWithPassword(userId: arguments[3], password: password)
            Progress.say("sealed \(transport.received)")
            while true {
                _ = try await auth.getAccessToken(forceRefresh: true)
                Progress.say("sealed \(transport.received)")
            }
        } catch {
            Progress.fail("\(error)")
        }
    }
}
