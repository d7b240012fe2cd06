import ArgumentParser

/// The options every command that talks to the issuer or the store takes.
struct ConnectionOptions: ParsableArguments {
    /// Every `--profile` given: one for every command (``Settings`` refuses more), several for
    /// `credential-vault agent`, which serves each from one process (``withProfile(_:)``).
    @Option(
        name: .customLong("profile"),
        help: ArgumentHelp(
            "A named profile of the config file: its keys override the top level's (env CREDENTIAL_VAULT_PROFILE). "
                + "`agent` takes several.",
            valueName: "name"
        )
    )
    var profiles: [String] = []

    /// The default profile, whatever `CREDENTIAL_VAULT_PROFILE` says: set by a helper whose host the top level
    /// claims (``withProfile(_:exactly:)``), so that the variable can never hand that host another account's token.
    @Flag(name: .customLong("default-profile"), help: .private)
    var defaultProfileOnly = false

    /// These options for the one profile `name`. nil is the default profile, or `CREDENTIAL_VAULT_PROFILE`'s; with
    /// `exactly`, the default profile itself.
    func withProfile(_ name: String?, exactly: Bool = false) -> ConnectionOptions {
        var options = self
        options.profiles = name.map { [$0] } ?? []
        options.defaultProfileOnly = exactly && name == nil
        return options
    }

    @Option(
        help: ArgumentHelp(
            "A SMART on FHIR server's base URL: the login is a SMART launch there, whose endpoints it names "
                + "(env CREDENTIAL_VAULT_FHIR; the issuer is then not used).",
            valueName: "url"
        )
    )
    var fhir: String?

    @Option(help: ArgumentHelp("The OpenID Connect issuer URL (env CREDENTIAL_VAULT_ISSUER).", valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "The client id at the issuer (env CREDENTIAL_VAULT_CLIENT_ID; default vault).",
            valueName: "id"
        )
    )
    var clientId: String?

    @Option(
        help: ArgumentHelp(
            "A confidential client's secret, read from a file only you can read (0600) (env CREDENTIAL_VAULT_CLIENT_SECRET_FILE).",
            valueName: "file"
        ),
        completion: .file()
    )
    var clientSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "A confidential client's private key (PEM, RSA, P-256 or P-384) for private_key_jwt, read from a file "
                + "only you can read (0600) (env CREDENTIAL_VAULT_CLIENT_KEY_FILE).",
            valueName: "file"
        ),
        completion: .file()
    )
    var clientKeyFile: String?

    @Option(
        help: ArgumentHelp(
            "The key id (kid) the server knows the client key by, sent in every private_key_jwt assertion "
                + "(env CREDENTIAL_VAULT_CLIENT_KEY_ID; config clientKeyId).",
            valueName: "kid"
        )
    )
    var clientKeyId: String?

    @Option(
        name: .customLong("auth-param"),
        help: ArgumentHelp(
            "An extra parameter of the login's authorization request, as key=value; repeat it for more (env "
                + "CREDENTIAL_VAULT_AUTH_PARAMS, space-separated; config authParams, a list). Never replaces a standard "
                + "one.",
            valueName: "key=value"
        )
    )
    var authParams: [String] = []

    @Option(
        help: ArgumentHelp(
            "max_age of the login, in seconds: the user must have authenticated at the issuer at most this long ago "
                + "(0: now); the id token's auth_time is checked (env CREDENTIAL_VAULT_MAX_AGE; config maxAge).",
            valueName: "seconds"
        )
    )
    var maxAge: String?

    @Option(
        help: ArgumentHelp(
            "acr_values of the login: the authentication context classes asked for, space-separated (env "
                + "CREDENTIAL_VAULT_ACR_VALUES; config acrValues).",
            valueName: "values"
        )
    )
    var acrValues: String?

    @Option(
        help: ArgumentHelp(
            "login_hint of the login: who logs in, for the issuer to fill in (env CREDENTIAL_VAULT_LOGIN_HINT; "
                + "config loginHint).",
            valueName: "hint"
        )
    )
    var loginHint: String?

    @Option(
        help: ArgumentHelp(
            "The key service's v1 base URL (env CREDENTIAL_VAULT_KEY_SERVICE; default ISSUER/keyservice/v1).",
            valueName: "url"
        )
    )
    var keyService: String?

    @Option(
        help: ArgumentHelp("The directory of the encrypted logins (env CREDENTIAL_VAULT_STORE).", valueName: "dir"),
        completion: .directory
    )
    var store: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("The user (env CREDENTIAL_VAULT_USER; default: the only stored user).", valueName: "user")
    )
    var user: String?

    @Option(
        help: ArgumentHelp(
            "Certificate authorities (PEM) to trust for https besides the system's, for a private CA or a "
                + "TLS-inspecting proxy (env CREDENTIAL_VAULT_CA_FILE; config caFile; else SSL_CERT_FILE, instead of "
                + "the system's).",
            valueName: "file"
        ),
        completion: .file()
    )
    var caFile: String?

    @Option(
        help: ArgumentHelp(
            "The configuration file (env CREDENTIAL_VAULT_CONFIG; default $XDG_CONFIG_HOME/credential-vault/config.json).",
            valueName: "file"
        ),
        completion: .file(extensions: ["json"])
    )
    var config: String?
}
