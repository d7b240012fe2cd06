import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault login`: the password opens the stored refresh token; the rotated one is sealed again.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the password: open the stored login and get a fresh access token.",
        discussion: """
            Opens the stored refresh token with the password (Argon2id, then the key service), redeems it at the \
            issuer and seals the rotated refresh token again. Three wrong passwords in a row lock the key for good.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var passwords: PasswordOptions

    @Flag(help: "Also turn device unlock on, so `credential-vault token` needs no password on this device.")
    var rememberDevice = false

    func run() async throws {
        let prompt = passwords.prompt
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let password = try prompt.read("Password for \(userId): ")
            let token = try await Progress.run("Unlocking (Argon2id, key service, token endpoint)...") {
                try await context.auth.loginWithPassword(userId: userId, password: password)
            }
            if rememberDevice {
                // The open session holds what device unlock keeps: no second Argon2id, no key-service call.
                try await context.auth.enableDeviceUnlock()
            }
            Terminal.output("Logged in as \(userId); the access token is valid \(Format.validity(token.expireDate)).")
            if rememberDevice {
                Terminal.output("Device unlock is on: `credential-vault token` needs no password on this device.")
            }
        }
    }
}
