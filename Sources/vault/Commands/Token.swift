import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault token`: a fresh access token on standard output, for scripts.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a fresh access token (and nothing else) on standard output.",
        discussion: """
            For scripts: curl -H "Authorization: Bearer $(credential-vault token)" https://api.example
            Uses device unlock when it is on for the user (no password); otherwise the password, typed at the \
            terminal or read with --password-stdin.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    func run() async throws {
        let prompt = unlocking.prompt
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, _) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: !unlocking.noDeviceUnlock
            )
            Terminal.output(token.token)
        }
    }
}
