import ArgumentParser
import CredentialVault

@main
struct CredentialVaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential-vault",
        abstract: "Keeps you signed in with a short password: an encrypted refresh token, unlocked by a key service.",
        discussion: """
            Start with `credential-vault register` (OpenID Connect in a browser, then a new password); then `credential-vault token` \
            prints a fresh access token: curl -H "Authorization: Bearer $(credential-vault token)" ...

            Passwords are never arguments: they are typed at the terminal without echo, or read as lines from \
            standard input with --password-stdin.

            CONFIGURATION: flags, then environment variables (CREDENTIAL_VAULT_FHIR, CREDENTIAL_VAULT_ISSUER, CREDENTIAL_VAULT_CLIENT_ID, CREDENTIAL_VAULT_KEY_SERVICE, \
            CREDENTIAL_VAULT_STORE, CREDENTIAL_VAULT_USER, CREDENTIAL_VAULT_SCOPES, CREDENTIAL_VAULT_REDIRECT_URI, CREDENTIAL_VAULT_TIMEOUT, CREDENTIAL_VAULT_CLIENT_SECRET_FILE, \
            CREDENTIAL_VAULT_CLIENT_KEY_FILE, CREDENTIAL_VAULT_CLIENT_AUTH, CREDENTIAL_VAULT_CONFIG), then \
            $XDG_CONFIG_HOME/credential-vault/config.json (keys fhir, issuer, clientId, keyService, store, user, \
            scopes, redirectURI, timeout, clientSecretFile, clientKeyFile, clientAuth). A confidential client's \
            secret or key lives in a file of its own, readable by you alone (chmod 600). `credential-vault config` shows \
            each effective value and where it came from.

            AGENT: `credential-vault agent` asks for the password once and leaves a background process that keeps the \
            session in memory, behind a Unix socket only you can use; `credential-vault token`, `credential-vault whoami`, \
            `credential-vault exec` and `credential-vault fhir get` then need no password while it runs (10 minutes idle or 2 hours at most by default), \
            and `credential-vault lock` ends it.

            HELPERS: git, kubectl and docker ask for tokens themselves through `credential-vault git-credential` \
            (set up with `credential-vault setup-git --host HOST`), `credential-vault kubectl-credential` (an exec \
            credential plugin) and `credential-vault docker-credential` (a credential helper); each writes only \
            the credential to standard output. Without an agent or a terminal they ask for the password through \
            CREDENTIAL_VAULT_ASKPASS or SSH_ASKPASS. token, exec and the helpers take --min-ttl SECONDS (a token \
            valid at least that long) and --force-refresh.

            JSON: token, whoami, agent, status, decode, config and smart context take --json: one object with \
            stable field names (token --json: {"token", "tokenType", "userId", "expiresAt"}; the documentation lists them all).

            EMBEDDED DEFAULT: with no issuer and no key service configured, credential-vault runs the package's \
            keyservice-mock (beside credential-vault, else on PATH) as a child process on 127.0.0.1, with its state and a \
            remembered port under \
            $XDG_STATE_HOME/credential-vault, and says so in one line on standard error.

            SHELL COMPLETION: credential-vault --generate-completion-script bash|zsh|fish

            EXIT STATUS:
            \(ExitStatus.helpTable)
            """,
        version: "0.1.0",
        subcommands: [
            Register.self, Login.self, Token.self, Whoami.self, Agent.self, Lock.self, Passwd.self, Logout.self,
            Status.self,
            DeviceUnlock.self, Exec.self, DPoPProof.self, Decode.self, Config.self, Smart.self, Fhir.self, Demo.self,
            GitCredential.self, SetupGit.self, KubectlCredential.self, DockerCredential.self,
        ]
    )

    /// The entry point: the process is hardened (no core files) before any argument is parsed or secret read, and
    /// SIGINT, SIGTERM and SIGHUP wait while a rotated refresh token is on its way to disk. The commands other
    /// programs call often are parsed on their own (``HotCommand``), everything else from here.
    static func main() async {
        ProcessHardening.apply()
        TerminationSignals.install()
        if var command = await HotCommand.parse(Array(CommandLine.arguments.dropFirst())) {
            do {
                try await command.run()
            } catch {
                exit(withError: error)
            }
            return
        }
        await main(nil)
    }
}
