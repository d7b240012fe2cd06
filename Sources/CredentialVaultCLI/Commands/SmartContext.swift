import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault smart context`: the launch context sealed with the login, after the password (or device unlock).
struct SmartContext: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "context",
        abstract: "Show the launch context sealed with the login (a table, or JSON with --json).",
        discussion: """
            Unlocks like `credential-vault token`. JSON fields: patient, encounter, fhirContext (as sent), needPatientBanner, \
            smartStyleURL, intent, tenant, fhirUser, scope (as granted), fhirBase, issuer, tokenEndpoint, clientId, \
            launch ("ehr" or "standalone") and additionalFields (every field the server sent that is not one of \
            these, as sent). A field without a value is null.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @Flag(help: "Print the context as one JSON object.")
    var json = false

    func run() async throws {
        try await VaultContext.with(connection) { context in
            let smart = try await context.unlockedSMARTClient(unlocking)
            guard let launched = await smart.launchContext else {
                throw VaultError(.notLoggedIn, reason: "No session.")
            }
            if json {
                Terminal.output(Format.json(Self.json(launched), pretty: true))
            } else {
                Terminal.output(Format.table(Self.summary(launched)))
            }
        }
    }

    /// The context with the CLI's stable field names (documented in `--help` and the CommandLineTool article).
    static func json(_ context: LaunchContext) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let fhirContext: [JSONValue] = context.fhirContext.map { item in
            var object = item.additionalFields
            if let reference = item.reference { object["reference"] = .string(reference) }
            if let canonical = item.canonical { object["canonical"] = .string(canonical) }
            if let identifier = item.identifier { object["identifier"] = identifier }
            if let type = item.type { object["type"] = .string(type) }
            if let role = item.role { object["role"] = .string(role) }
            return .object(object)
        }
        return .object([
            "patient": text(context.patient),
            "encounter": text(context.encounter),
            "fhirContext": .array(fhirContext),
            "needPatientBanner": context.needPatientBanner.map(JSONValue.bool) ?? .null,
            "smartStyleURL": text(context.smartStyleURL),
            "intent": text(context.intent),
            "tenant": text(context.tenant),
            "fhirUser": text(context.fhirUser),
            "scope": text(context.scope?.text),
            "fhirBase": text(context.fhirBase?.absoluteString),
            "issuer": text(context.issuer),
            "tokenEndpoint": text(context.tokenEndpoint?.absoluteString),
            "clientId": text(context.clientId),
            "launch": .string(context.isEHRLaunch ? "ehr" : "standalone"),
            "additionalFields": .object(context.additionalFields),
        ])
    }

    /// The context's fields that have a value, for a table.
    static func summary(_ context: LaunchContext) -> [String: JSONValue] {
        guard case .object(let fields) = json(context) else { return [:] }
        return fields.filter { field in
            switch field.value {
            case .null: false
            case .array(let items): !items.isEmpty
            case .object(let members): !members.isEmpty
            default: true
            }
        }
    }
}
