import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault register`: the OpenID Connect code flow, then a new password that seals the refresh token.
struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in with OpenID Connect and seal the refresh token under a new password.",
        discussion: """
            Prints the authorization URL (and opens a browser when there is a display), waits for the issuer to \
            come back to a listener on 127.0.0.1, then asks for the new password twice. Registering again \
            replaces the stored login: this is how a locked key starts over.

            With --device no browser is needed here: the verification URI and a user code are printed on \
            standard error, to be entered in a browser on any other device; the login goes on once it is approved \
            there (RFC 8628; the issuer must offer it). With --no-browser the authorization URL is printed instead; \
            open it anywhere, log in, and paste back the address the browser ended at (its state and issuer are \
            checked as the listener checks them).

            With --password-stdin the new password is the first line of standard input; a second line, if \
            present, must repeat it. With --no-browser the pasted address is the first line, and the password \
            lines follow it.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var passwords: PasswordOptions

    @Flag(help: "Ask the issuer for its sign-up page instead of its login page.")
    var signUp = false

    @Flag(
        help: """
            Fetch the authorization URL without a browser and follow its redirect (for issuers that approve \
            without a page, such as keyservice-mock; always so for the embedded default).
            """
    )
    var unattended = false

    @Flag(help: "Log in with a code entered in a browser on another device (RFC 8628 device authorization).")
    var device = false

    @Flag(help: "Print the authorization URL and read back the address the browser ended at, pasted.")
    var noBrowser = false

    @Flag(help: "Also turn device unlock on, so `credential-vault token` needs no password on this device.")
    var rememberDevice = false

    @Option(help: "Seconds to wait for the browser to come back.")
    var timeout = 300

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout takes 1 to 3600 seconds") }
        guard !(device && noBrowser) else {
            throw ValidationError("--device and --no-browser are two ways in: pick one")
        }
        guard !(unattended && (device || noBrowser)) else {
            throw ValidationError(
                "--unattended follows the authorization URL itself: not with --device or --no-browser"
            )
        }
    }

    func run() async throws {
        let prompt = passwords.prompt
        // From standard input the password is read first: a missing line fails before any login happens.
        // With --no-browser the pasted address comes first.
        let early = passwords.passwordStdin && !noBrowser ? try Command.catching { try prompt.readNew() } : nil
        try await VaultContext.with(connection) { context in
            // With a FHIR server configured the login is a SMART launch (standalone).
            if context.smart != nil {
                guard !device && !noBrowser else {
                    throw CLIError.usage(
                        "--device and --no-browser are not for a SMART launch (a FHIR server is configured)"
                    )
                }
                try await SmartLaunch.launchAndSeal(
                    context,
                    ehr: nil,
                    unattended: unattended,
                    timeout: timeout,
                    password: early,
                    prompt: prompt
                )
                if rememberDevice { try await context.auth.enableDeviceUnlock() }
                return
            }
            if context.isEmbedded { Terminal.note(Self.embeddedLockoutNote) }
            let follow = unattended || context.isEmbedded
            let presenter: @Sendable (URL) async -> Void =
                follow
                ? { @Sendable [trustRoots = context.vault.configuration.trustRoots] url in
                    await AuthorizationPresenter.unattended(url, trustRoots: trustRoots)
                } : AuthorizationPresenter.browser
            let flow = {
                try await context.auth.performOpenIDConnectFlow(
                    flow: signUp ? .signUp : .signIn,
                    // The name to keep the login under when the issuer gives no id_token (a plain OAuth server).
                    userId: context.settings.user.value,
                    timeout: .seconds(timeout),
                    presentAuthorizationURL: presenter
                )
            }
            let userId: String
            if device {
                userId = try await context.auth.performDeviceAuthorizationFlow(
                    userId: context.settings.user.value,
                    presentUserCode: { HeadlessLogin.showUserCode($0) }
                )
            } else if noBrowser {
                userId = try await context.auth.performOpenIDConnectFlowWithPastedRedirect(
                    flow: signUp ? .signUp : .signIn,
                    userId: context.settings.user.value,
                    readPastedRedirect: { HeadlessLogin.readPastedRedirect($0) }
                )
            } else {
                userId =
                    follow
                    ? try await Progress.run("Logging in with OpenID Connect (no browser)...", flow) : try await flow()
            }
            context.userId = userId
            Terminal.note("Logged in with OpenID Connect as \(userId).")
            if let configured = context.settings.user.value, configured != userId {
                Terminal.note(
                    "credential-vault: note: the issuer logged in \(userId), not the configured user \(configured) "
                        + "(\(context.settings.user.source))"
                )
            }
            if await context.userStorage.hasStoredRefreshToken(userId: userId) {
                Terminal.note("A login is already stored for \(userId); the new password replaces it.")
            }
            let password = try early ?? prompt.readNewWithRetries()
            try await Progress.run("Sealing the refresh token (Argon2id, new key at the key service)...") {
                try await context.auth.storeRefreshToken(withNewPassword: password)
            }
            if rememberDevice {
                // The session holds the new key's secrets: no second Argon2id, no key-service call.
                try await context.auth.enableDeviceUnlock()
            }
            Terminal.output(
                "Registered \(userId): the refresh token is sealed under your password in "
                    + "\(context.storeDirectory.path)."
            )
            if rememberDevice {
                Terminal.output("Device unlock is on: `credential-vault token` needs no password on this device.")
            }
        }
    }

    /// Said once on every registration against the embedded default, before a password is chosen for it.
    static let embeddedLockoutNote =
        "credential-vault: note: the embedded key service runs on this device, with its state on the same disk: its lockout "
        + "after three wrong passwords does not protect against someone who has this device (with a copy of the "
        + "disk, guesses are unlimited). For that protection, configure a real issuer and key service (--issuer, "
        + "CREDENTIAL_VAULT_ISSUER or the config file)."
}
