import CredentialVault
import Foundation

/// What kubectl tells an exec plugin in `KUBERNETES_EXEC_INFO`: an `ExecCredential` whose `apiVersion` the answer
/// must carry, and `spec.interactive`.
struct KubernetesExecInfo: Sendable {
    /// The apiVersion of the answer.
    let apiVersion: String
    /// Whether kubectl lets the plugin use the terminal (`spec.interactive`); nil when not said.
    let interactive: Bool?

    /// Reads the variable's value; without one (a plugin run by hand), v1 and nothing said about the terminal.
    /// - Throws: ``CLIError`` when it is not JSON, not an ExecCredential, or names a version this plugin does not
    ///   speak.
    init(environment value: String?) throws {
        guard let value, !value.isEmpty else {
            apiVersion = KubectlCredential.apiVersions[0]
            interactive = nil
            return
        }
        let object: [String: Any]
        do {
            object = try UntrustedJSON.object(from: Data(value.utf8))
        } catch {
            throw CLIError.usage("KUBERNETES_EXEC_INFO is not a JSON object: is this run by kubectl?")
        }
        guard let version = object["apiVersion"] as? String, KubectlCredential.apiVersions.contains(version) else {
            throw CLIError.usage(
                "KUBERNETES_EXEC_INFO asks for apiVersion \(object["apiVersion"].map { "\($0)" } ?? "(none)"); "
                    + "this plugin speaks " + KubectlCredential.apiVersions.joined(separator: " and ")
            )
        }
        if let kind = object["kind"] as? String, kind != "ExecCredential" {
            throw CLIError.usage("KUBERNETES_EXEC_INFO is a \(kind), not an ExecCredential")
        }
        apiVersion = version
        interactive = (object["spec"] as? [String: Any])?["interactive"] as? Bool
    }
}
