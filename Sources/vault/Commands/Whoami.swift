import ArgumentParser
import CredentialVault
import Foundation

/// `vault whoami`: the claims of a fresh access token.
struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the claims of a fresh access token (a table, or JSON with --json).",
        discussion: "Unlocks like `vault token`: device unlock when it is on, otherwise the password."
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @Flag(help: "Print the claims as one JSON object.")
    var json = false

    func run() async throws {
        let prompt = unlocking.prompt
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, viaDevice) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: !unlocking.noDeviceUnlock
            )
            if json {
                Terminal.output(Format.json(.object(token.claims)))
            } else {
                let user = Format.escapingControlCharacters(token.userId)
                Terminal.output("user \(user) (unlocked with \(viaDevice ? "device unlock" : "the password"))")
                Terminal.output(Format.table(token.claims))
            }
        }
    }
}
