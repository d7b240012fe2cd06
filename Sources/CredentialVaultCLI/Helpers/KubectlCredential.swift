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

    /// `2025-01-31T14:05:09Z`: whole seconds, rounded down, in UTC. Counted here from the days since 1970 (Howard
    /// Hinnant's `civil_from_days`, proleptic Gregorian calendar), not with `ISO8601DateFormatter`: kubectl runs the
    /// plugin often, and the formatter loads ICU's time-zone data first. Checked against the formatter on 200,000
    /// dates from 1970 to 9999 when it was written, and against it in KubectlCredentialTests.
    static func rfc3339(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let second = ((seconds % 86_400) + 86_400) % 86_400
        let days = (seconds - second) / 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T"
            + "\(digits(second / 3600, 2)):\(digits(second % 3600 / 60, 2)):\(digits(second % 60, 2))Z"
    }
}
