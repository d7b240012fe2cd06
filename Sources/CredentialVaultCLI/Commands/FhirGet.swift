import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault fhir get`: a FHIR read or search, printed as pretty JSON.
struct FhirGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "GET a FHIR path (Patient/123, 'Patient?_count=5') and print the JSON.",
        discussion: """
            The path is relative to the FHIR server (--fhir). With --all-pages a search follows each Bundle's next \
            link (only under the FHIR server) and prints one searchset Bundle with every entry. A 401 refreshes \
            the access token once and tries again; a 403 means the granted scope does not cover the request.
            Takes the access token (and a DPoP-bound login's proofs) from a running `credential-vault agent` like \
            `credential-vault token` (no password; the request itself goes from here); otherwise, or with \
            --no-agent, unlocks like `credential-vault token`.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @OptionGroup(title: "As a backend service (no login, no password)") var backend: BackendOptions

    @Argument(help: ArgumentHelp("The path under the FHIR server.", valueName: "path"))
    var path: String

    @Flag(help: "Follow a search's next links and print every entry in one Bundle.")
    var allPages = false

    func validate() throws {
        guard !path.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("give a FHIR path, such as Patient/p1 or 'Patient?_count=5'")
        }
    }

    func run() async throws {
        if backend.isBackend {
            try await Command.run {
                try await Self.get(path, allPages: allPages, from: try backend.client(connection))
            }
            return
        }
        if !agent.noAgent {
            var access: AgentFHIRAccess?
            try await Command.run { access = try await AgentFHIRAccess.make(connection) }
            if let access {
                try await Command.run {
                    do {
                        try await Self.get(path, allPages: allPages, from: access)
                    } catch {
                        // A failure of the agent itself is told with its own words and exit status.
                        if let failure = await access.failure { throw failure }
                        throw error
                    }
                }
                return
            }
        }
        try await VaultContext.with(connection) { context in
            try await Self.get(path, allPages: allPages, from: try await context.unlockedSMARTClient(unlocking))
        }
    }

    /// Prints the JSON at `path` (every page's entries in one Bundle, with `allPages`).
    static func get(_ path: String, allPages: Bool, from client: some FHIRAccess) async throws {
        let result: JSONValue
        if allPages {
            let bundles = try await client.search(path, allPages: true)
            let entries = bundles.flatMap { $0["entry"]?.arrayValue ?? [] }
            result = .object([
                "resourceType": "Bundle",
                "type": "searchset",
                "total": bundles.first?["total"] ?? .number(Double(entries.count)),
                "entry": .array(entries),
            ])
        } else {
            result = try await client.getJSON(at: path)
        }
        Terminal.output(Format.json(result, pretty: true))
    }
}
