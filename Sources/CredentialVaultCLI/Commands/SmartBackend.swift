import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault smart backend`: a SMART Backend Services access token (client_credentials, private_key_jwt).
struct SmartBackend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backend",
        abstract: "Print a backend service's access token (client_credentials with a private key), or its JWKS.",
        discussion: """
            credential-vault smart backend --fhir URL --client-id ID --key FILE --key-id KID --scope 'system/*.rs'
            No user, no password, no refresh token: the key signs an RS384 (RSA) or ES384 (P-384) client assertion. \
            --jwks prints the key's public JWK Set, for the server's registration of the client, and sends nothing. \
            `credential-vault fhir get` takes the same --key, --key-id and --scope to read as the service. Make a key \
            with `credential-vault smart backend-key FILE --key-id KID`.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var backend: BackendOptions

    @Flag(help: "Print the key's public JWK Set instead of a token; nothing is sent.")
    var jwks = false

    @Flag(help: "Print {\"token\", \"expiresAt\", \"scope\"} as JSON.")
    var json = false

    func run() async throws {
        try await Command.run {
            let client = try backend.client(connection)
            if jwks {
                Terminal.output(Format.json(client.authentication.publicJWKS ?? .null, pretty: true))
                return
            }
            let token = try await client.getAccessToken()
            if json {
                Terminal.output(
                    Format.json([
                        "token": .string(token.token),
                        "expiresAt": token.expireDate.map { .number($0.timeIntervalSince1970.rounded()) } ?? .null,
                        "scope": await client.grantedScope.map { .string($0.text) } ?? .null,
                    ])
                )
            } else {
                Terminal.output(token.token)
            }
        }
    }
}
