import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault passwd`: a new password (and a new key) for the stored login.
struct Passwd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the password of the stored login.",
        discussion: """
            Asks for the current password, then the new one twice. With --password-stdin: the current password \
            on the first line, the new one on the second, and optionally the new one again on the third. The \
            login is sealed again under a new key; device unlock stays on if it was.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var passwords: PasswordOptions

    func run() async throws {
        let prompt = passwords.prompt
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let current = try prompt.read("Current password for \(userId): ")
            let new = try prompt.readNew("New password: ", repeat: "Repeat the new password: ")
            try await Progress.run("Changing the password (Argon2id twice, key service)...") {
                try await context.userStorage.changePassword(userId: userId, from: current, to: new)
            }
            Terminal.output("The password of \(userId) is changed.")
        }
    }
}
