import ArgumentParser
import CredentialVault
import CredentialVaultSMART
import Foundation

/// `credential-vault smart introspect`: what the server says about the session's access token (RFC 7662).
struct SmartIntrospect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "introspect",
        abstract: "Ask the server's introspection endpoint (RFC 7662) about a fresh access token; prints its JSON.",
        discussion: """
            Unlocks like `credential-vault token`, then asks with the client's authentication. The answer is printed \
            as the server sent it (active, scope, client_id, sub, exp, ...); an inactive token is {"active": false}.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    func run() async throws {
        try await VaultContext.with(connection) { context in
            let answer = try await context.unlockedSMARTClient(unlocking).vault().auth.introspect()
            Terminal.output(Format.json(.object(answer.fields), pretty: true))
        }
    }
}
