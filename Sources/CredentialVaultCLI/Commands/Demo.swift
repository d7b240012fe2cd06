import ArgumentParser
import CredentialVault
import Foundation
import VaultCrypto

/// `credential-vault demo`: the whole story against keyservice-mock run as a child process, in temporary directories.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the whole story against keyservice-mock (a child process), in temporary directories.",
        discussion: """
            Registers the demo user through the real OpenID Connect code flow, sets a password, logs in, shows \
            the claims, forces a refresh, locks the key with three wrong passwords, shows the right password \
            refused, and recovers by registering again. Only 127.0.0.1 is used; nothing outside a temporary \
            directory is touched, and no configuration is read.
            """
    )

    func run() async throws {
        try await Command.run {
            try await DemoScript().run()
        }
    }
}
