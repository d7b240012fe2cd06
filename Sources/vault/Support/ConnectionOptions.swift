import ArgumentParser

/// The options every command that talks to the issuer or the store takes.
struct ConnectionOptions: ParsableArguments {
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
            "A confidential client's private key (PEM, RSA or P-256) for private_key_jwt, read from a file only you "
                + "can read (0600) (env CREDENTIAL_VAULT_CLIENT_KEY_FILE).",
            valueName: "file"
        ),
        completion: .file()
    )
    var clientKeyFile: String?

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
