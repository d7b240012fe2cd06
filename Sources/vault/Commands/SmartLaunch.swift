import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault smart launch`: a standalone or EHR launch, then a new password that seals the login and its context.
struct SmartLaunch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "Launch at a FHIR server (standalone, or EHR with --launch and --iss) and seal the login.",
        discussion: """
            Standalone: credential-vault smart launch --fhir https://fhir.example/r4
            EHR launch: credential-vault smart launch --fhir URL --launch=ID --iss URL (the iss the EHR passed must be the \
            FHIR server; the launch scope is added; write --launch=ID, as an id may begin with -).
            Scopes: CREDENTIAL_VAULT_SCOPES or the config file's scopes; by default \
            "launch/patient openid fhirUser offline_access patient/*.rs". Then, as for `credential-vault register`, the new \
            password (twice on a terminal, or with --password-stdin).
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var passwords: PasswordOptions

    @Option(help: ArgumentHelp("The launch id the EHR passed (an EHR launch; needs --iss).", valueName: "id"))
    var launch: String?

    @Option(help: ArgumentHelp("The iss the EHR passed with --launch: the FHIR server's base URL.", valueName: "url"))
    var iss: String?

    @Flag(
        help: """
            Fetch the authorization URL without a browser and follow its redirect (for servers that approve \
            without a page, such as keyservice-mock --smart).
            """
    )
    var unattended = false

    @Option(help: "Seconds to wait for the browser to come back.")
    var timeout = 300

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout takes 1 to 3600 seconds") }
        guard (launch == nil) == (iss == nil) else { throw ValidationError("--launch and --iss go together") }
        if let iss, URL(string: iss)?.scheme == nil { throw ValidationError("--iss must be a URL") }
    }

    func run() async throws {
        let prompt = passwords.prompt
        // From standard input the password is read first: a missing line fails before any launch happens.
        let early = passwords.passwordStdin ? try Command.catching { try prompt.readNew() } : nil
        try await VaultContext.with(connection) { context in
            let smart = try context.smartClient()
            if let launch, let iss = iss.flatMap(URL.init(string:)) {
                try await smart.handleEHRLaunch(iss: iss, launch: launch)
            }
            let presenter: @Sendable (URL) async -> Void =
                unattended ? AuthorizationPresenter.unattended : AuthorizationPresenter.browser
            let authorize = {
                try await smart.authorize(
                    userId: context.settings.user.value,
                    timeout: .seconds(timeout),
                    presentAuthorizationURL: presenter
                )
            }
            let launched =
                unattended
                ? try await Progress.run("Launching at the FHIR server (no browser)...", authorize)
                : try await authorize()
            let userId = await context.auth.currentUserId ?? "?"
            context.userId = userId
            Terminal.note(
                "Launched at \(smart.fhirBase.absoluteString) as \(Format.escapingControlCharacters(userId))."
            )
            let password = try early ?? prompt.readNewWithRetries()
            try await Progress.run("Sealing the refresh token and the launch context (Argon2id, new key)...") {
                try await smart.storeRefreshToken(withNewPassword: password)
            }
            Terminal.output(Format.table(SmartContext.summary(launched)))
            Terminal.output(
                "Registered \(Format.escapingControlCharacters(userId)): the refresh token and its launch context are "
                    + "sealed under your password in \(context.storeDirectory.path)."
            )
        }
    }
}
