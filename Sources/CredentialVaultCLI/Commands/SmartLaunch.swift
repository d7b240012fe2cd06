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
            try await Self.launchAndSeal(
                context,
                ehr: launch.flatMap { id in iss.flatMap(URL.init(string:)).map { (id, $0) } },
                unattended: unattended,
                timeout: timeout,
                password: early,
                prompt: prompt
            )
        }
    }

    /// The launch (EHR when `ehr` names the launch id and iss), then a new password that seals the login and its
    /// context. `credential-vault register` with a FHIR server configured runs it too, so every hint that says
    /// "run register" holds for a SMART login.
    ///
    /// What would fail after the browser is checked before it: the store directory, and for a server found through
    /// its CapabilityStatement (which states no issuer, so no id token can be checked) the scopes and the user name.
    static func launchAndSeal(
        _ context: VaultContext,
        ehr: (launch: String, iss: URL)?,
        unattended: Bool,
        timeout: Int,
        password early: String?,
        prompt: PasswordPrompt
    ) async throws {
        let smart = try context.smartClient()
        _ = try await context.userStorage.availableUserIds
        let discovered = try await smart.ready()
        let scopes = context.vault.configuration.scopes
        if discovered.source == .capabilityStatement {
            let fix =
                "set CREDENTIAL_VAULT_SCOPES to scopes without openid (such as \"launch/patient offline_access "
                + "patient/*.rs\") and name the login with --user NAME"
            if scopes.contains("openid") || context.settings.user.value == nil {
                throw CLIError.configuration(
                    "the FHIR server \(smart.fhirBase.absoluteString) was found through its CapabilityStatement, "
                        + "which names no issuer, so no id token from it can be checked and none can name the user: "
                        + fix
                )
            }
        }
        if context.isEmbedded { Terminal.note(Register.embeddedLockoutNote) }
        if let ehr { try await smart.handleEHRLaunch(iss: ehr.iss, launch: ehr.launch) }
        let presenter: @Sendable (URL) async -> Void =
            unattended
            ? { @Sendable [trustRoots = context.vault.configuration.trustRoots] url in
                await AuthorizationPresenter.unattended(url, trustRoots: trustRoots)
            } : AuthorizationPresenter.browser
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
        Terminal.note("Launched at \(smart.fhirBase.absoluteString) as \(Format.escapingControlCharacters(userId)).")
        let password = try early ?? prompt.readNewWithRetries()
        try await Progress.run("Sealing the refresh token and the launch context (Argon2id, new key)...") {
            try await smart.vault().auth.storeRefreshToken(withNewPassword: password)
        }
        Terminal.output(Format.table(SmartContext.summary(launched)))
        Terminal.output(
            "Registered \(Format.escapingControlCharacters(userId)): the refresh token and its launch context are "
                + "sealed under your password in \(context.storeDirectory.path)."
        )
    }
}
