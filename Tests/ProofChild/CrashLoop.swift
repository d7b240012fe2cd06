import CredentialVault
import Foundation
import VaultCrypto

/// The crash suite's workload: login with rotation, refreshes, device unlock on and off, a login by device unlock
/// and a password change, round after round until the parent kills it.
///
/// Standard input: the password that opens the envelope now, the other password (the change switches between the
/// two), and the fingerprint key (base64). Lines: `ready`; `requesting N`, `received N FINGERPRINT` (from
/// ``ProgressTransport``) and `sealed N` once the call that rotated token N returned (it is on disk then);
/// `changing` / `changed` around a password change; `enabling` / `enabled` and `disabling` / `disabled` around
/// device unlock.
///
/// With `--memory-only` it plays the crash suite's second planted defect instead: one password login that keeps
/// the rotated refresh token in memory only (THP's way), then `sealed 1` all the same, and a wait for the kill.
enum CrashLoop {
    static func run(_ arguments: [String]) async {
        var arguments = arguments
        let memoryOnly = arguments.contains("--memory-only")
        arguments.removeAll { $0 == "--memory-only" }
        guard arguments.count == 4, let issuer = URL(string: arguments[0]), let keyService = URL(string: arguments[1])
        else { Progress.fail("usage: crash-loop ISSUER KEY_SERVICE STORE USER_ID [--memory-only]", status: 64) }
        var password = Progress.readInput("the password")
        var other = Progress.readInput("the other password")
        let key: SecureBytes
        do {
            key = try SecureBytes(base64Encoded: Progress.readInput("the fingerprint key"))
        } catch {
            Progress.fail("the fingerprint key is not base64")
        }
        let userId = arguments[3]
        let transport = ProgressTransport(fingerprintKey: key)
        do throws(VaultError) {
            let configuration = ProofVaultConfiguration.make(
                issuer: issuer,
                keyService: keyService,
                store: arguments[2]
            )
            let vault = try Vault(configuration: configuration, transport: transport)
            let auth = vault.auth
            let storage = vault.userStorage
            Progress.say("ready")
            if memoryOnly {
                _ = try await auth.loginWithPassword(userId: userId, password: password, storeNewRefreshToken: false)
                Progress.say("sealed \(transport.received)")
                Progress.waitForEndOfInput()
                return
            }
            while true {
                _ = try await auth.loginWithPassword(userId: userId, password: password)
                Progress.say("sealed \(transport.received)")
                _ = try await auth.getAccessToken(forceRefresh: true)
                Progress.say("sealed \(transport.received)")
                Progress.say("enabling")
                try await auth.enableDeviceUnlock()
                Progress.say("enabled")
                _ = try await auth.loginWithDeviceUnlock(userId: userId)
                Progress.say("sealed \(transport.received)")
                _ = try await auth.getAccessToken(forceRefresh: true)
                Progress.say("sealed \(transport.received)")
                // Device unlock stays on through the change, under the new key.
                Progress.say("changing")
                try await storage.changePassword(userId: userId, from: password, to: other)
                Progress.say("changed")
                swap(&password, &other)
                _ = try await auth.loginWithDeviceUnlock(userId: userId)
                Progress.say("sealed \(transport.received)")
                Progress.say("disabling")
                try await storage.disableDeviceUnlock(userId: userId)
                Progress.say("disabled")
            }
        } catch {
            Progress.fail("\(error)")
        }
    }
}
