import Foundation

/// A test helper process for the proof suites (Tests/CredentialVaultTests/Proof): the crash suite kills it with
/// -9, the signal suite interrupts it, the disk-fault suite runs one storage call in it under a fault. Every line it
/// prints is for the parent; none carries a password or a token.
///
/// Usage:
/// - `vault-proof-child crash-loop ISSUER KEY_SERVICE STORE USER_ID` (``CrashLoop``)
/// - `vault-proof-child refresh-loop ISSUER KEY_SERVICE STORE USER_ID [--no-signal-guard]` (``RefreshLoop``)
/// - `vault-proof-child probe OPERATION KEY_SERVICE STORE USER_ID` (``StoreProbe``)
/// - `vault-proof-child in-place-write STORE [--pause-mid-write]` (``InPlaceWriter``, the planted defect)
/// - `vault-proof-child hold-lock STORE [LOCK_FILE]` (``LockHolder``)
///
/// Any mode takes `--file-size-limit BYTES` (``FileSizeLimit``). Over https it trusts the CA file named by
/// `CREDENTIAL_VAULT_CA_FILE` besides the system's authorities (``EnvironmentTrustRoots``).
@main
enum ProofChild {
    static func main() async {
        var arguments = FileSizeLimit.apply(Array(CommandLine.arguments.dropFirst()))
        let mode = arguments.isEmpty ? "" : arguments.removeFirst()
        switch mode {
        case "crash-loop": await CrashLoop.run(arguments)
        case "refresh-loop": await RefreshLoop.run(arguments)
        case "probe": await StoreProbe.run(arguments)
        case "in-place-write": InPlaceWriter.run(arguments)
        case "hold-lock": await LockHolder.run(arguments)
        default: Progress.fail("unknown mode '\(mode)'", status: 64)
        }
    }
}
