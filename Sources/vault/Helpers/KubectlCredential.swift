import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault kubectl-credential`: a kubectl exec credential plugin (`client.authentication.k8s.io/v1`, and
/// `v1beta1`): an `ExecCredential` with the access token and its expiry on standard output.
struct KubectlCredential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "A kubectl exec credential plugin: prints an ExecCredential with a fresh access token.",
        discussion: """
            In a kubeconfig user: exec: {apiVersion: client.authentication.k8s.io/v1, command: credential-vault, \
            args: [kubectl-credential], interactiveMode: IfAvailable}. The apiVersion of the answer is the one \
            KUBERNETES_EXEC_INFO names (v1 or v1beta1; v1 when it is not set); status.expirationTimestamp (RFC 3339) \
            tells kubectl how long to keep the token. The token comes from a running `credential-vault agent`; \
            without one, from device unlock or the password, typed at the terminal only when kubectl says the \
            plugin is interactive, else through CREDENTIAL_VAULT_ASKPASS.
            """
    )

    @OptionGroup var helper: HelperOptions

    /// The API versions this plugin answers.
    static let apiVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    func run() async throws {
        let info = try Command.catching {
            try KubernetesExecInfo(environment: ProcessInfo.processInfo.environment["KUBERNETES_EXEC_INFO"])
        }
        let served = try await helper.servedToken(usesTerminal: info.interactive != false)
        var status: [String: JSONValue] = ["token": .string(served.token)]
        if let expiry = served.expireDate { status["expirationTimestamp"] = .string(Self.rfc3339(expiry)) }
        let credential: JSONValue = .object([
            "apiVersion": .string(info.apiVersion),
            "kind": .string("ExecCredential"),
            "status": .object(status),
        ])
        Terminal.output(Format.json(credential))
    }

    /// `2025-01-31T14:05:09Z`: whole seconds, rounded down, in UTC.
    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }
}
