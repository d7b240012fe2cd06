import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault smart client`: the client the app registered at the server (RFC 7591), sealed with the login.
struct SmartClient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Show the client registered for the login (RFC 7591), print its key set, or rotate its key.",
        discussion: """
            With an empty client id (--client-id '' on every command, or "clientId": "" in the config file; an empty \
            CREDENTIAL_VAULT_CLIENT_ID counts as unset), `credential-vault register` \
            registers the app at the FHIR server's registration endpoint, as a private_key_jwt client with a new \
            P-384 key where the server offers that method. The registration (client id, secret or private key, \
            registration access token) is sealed with the refresh token; this command unlocks like \
            `credential-vault token` and shows it without its secrets. --jwks prints the public key set the server \
            must list. --rotate-key makes a new key: where the server manages registrations (RFC 7592) it is sent \
            there at once, and the old key is dropped; otherwise both keys are listed in --jwks until the server \
            accepts an assertion signed with the new one.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @Flag(help: "Give the registered client a new private key first.")
    var rotateKey = false

    @Flag(help: "Print the client's public JWK Set only.")
    var jwks = false

    @Flag(help: "Print the registration as one JSON object.")
    var json = false

    func run() async throws {
        try await VaultContext.with(connection) { context in
            let auth = try await context.unlockedSMARTClient(unlocking).vault().auth
            if rotateKey { try await auth.rotateClientKey() }
            guard let registration = await auth.clientRegistration else {
                throw CLIError.usage(
                    "the login uses a configured client id; only a client registered here (empty --client-id at "
                        + "register) is shown or rotated by this command"
                )
            }
            if jwks {
                guard let set = registration.publicJWKS else {
                    throw CLIError.usage("the registered client authenticates with \(registration.method), not a key")
                }
                Terminal.output(Format.json(set, pretty: true))
            } else if json {
                Terminal.output(Format.json(Self.json(registration), pretty: true))
            } else {
                Terminal.output(Format.table(Self.summary(registration)))
            }
        }
    }

    /// The registration's public parts, with stable field names.
    static func json(_ registration: ClientRegistration) -> JSONValue {
        .object([
            "clientId": .string(registration.clientId),
            "method": .string(registration.method.name),
            "keyIds": .array(registration.keyIds.map(JSONValue.string)),
            "pendingKey": .bool(registration.hasPendingKey),
            "registrationClientURI": registration.registrationClientURI.map { .string($0.absoluteString) } ?? .null,
        ])
    }

    private static func summary(_ registration: ClientRegistration) -> [String: JSONValue] {
        [
            "client id": .string(registration.clientId),
            "authentication": .string(registration.method.name),
            "keys": .string(registration.keyIds.isEmpty ? "none" : registration.keyIds.joined(separator: ", ")),
            "new key waiting": .string(registration.hasPendingKey ? "yes (publish --jwks at the server)" : "no"),
            "managed at": .string(registration.registrationClientURI?.absoluteString ?? "nowhere (no RFC 7592)"),
        ]
    }
}
