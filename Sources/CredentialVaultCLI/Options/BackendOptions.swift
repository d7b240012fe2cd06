import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// The options of a SMART backend service: its private key, the key's id, the scopes.
struct BackendOptions: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "A backend service's private key (PEM, RSA or P-384), in a file only you can read (0600).",
            valueName: "file"
        ),
        completion: .file()
    )
    var keyFile: String?

    @Option(help: ArgumentHelp("The kid the server registered the key under.", valueName: "kid"))
    var keyId: String?

    @Option(help: ArgumentHelp("The system/ scopes to ask for.", valueName: "scopes"))
    var scope = "system/*.rs"

    /// Whether a backend service is asked for (a key file is given).
    var isBackend: Bool { keyFile != nil }

    /// The backend client the options and `connection` describe: the FHIR server (`--fhir`), the client id
    /// (`--client-id`), the key file and its id.
    func client(_ connection: ConnectionOptions) throws -> SMARTBackendClient {
        let settings = try Settings(options: connection)
        guard let fhirText = settings.fhir.value, let fhirBase = URL(string: fhirText), fhirBase.scheme != nil else {
            throw CLIError.configuration("a backend service needs the FHIR server: set --fhir URL")
        }
        guard let keyFile else { throw CLIError.usage("give the service's private key with --key FILE") }
        guard let keyId, !keyId.isEmpty else {
            throw CLIError.usage("give the kid the server registered the key under with --key-id KID")
        }
        guard settings.clientId.source != .builtIn, let clientId = settings.clientId.value else {
            throw CLIError.usage("give the backend service's client id with --client-id ID")
        }
        let pem = try ConfigFile.secret(atPath: Paths.expandingTilde(keyFile), what: "the service key")
        let timeout = settings.timeout.value.flatMap(TimeInterval.init) ?? VaultConfiguration.defaultRequestTimeout
        return try SMARTBackendClient(
            fhirBase: fhirBase,
            clientId: clientId,
            privateKeyPEM: pem,
            keyId: keyId,
            scopes: scope.split(separator: " ").map(String.init),
            requestTimeout: timeout,
            transport: DefaultHTTPTransport.make(trustRoots: try VaultContext.trustRoots(settings))
        )
    }
}
