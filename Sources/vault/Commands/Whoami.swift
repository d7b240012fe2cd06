import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault whoami`: the claims of a fresh access token.
struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Show the claims of a fresh access token (a table, or JSON with --json); for an opaque one, sub and exp.",
        discussion: "Unlocks like `credential-vault token`: device unlock when it is on, otherwise the password."
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
            // An opaque access token has no claims to show: the user and the expiry stand in for them.
            let claims =
                token.jwt?.claims ?? [
                    "sub": .string(token.userId),
                    "exp": token.expireDate.map { .number($0.timeIntervalSince1970.rounded()) } ?? .null,
                ]
            if json {
                Terminal.output(Format.json(.object(claims)))
            } else {
                let user = Format.escapingControlCharacters(token.userId)
                Terminal.output("user \(user) (unlocked with \(viaDevice ? "device unlock" : "the password"))")
                if token.jwt == nil { Terminal.output("the access token is opaque: only the resource server reads it") }
                Terminal.output(Format.table(claims))
            }
        }
    }
}
