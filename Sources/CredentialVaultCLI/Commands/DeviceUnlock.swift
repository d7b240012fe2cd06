import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault device-unlock on|off`: keep the key service's device secret so scripts need no password.
struct DeviceUnlock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-unlock",
        abstract: "Turn device unlock on or off: `credential-vault token` then needs no password on this device.",
        discussion: """
            On: after the key service accepts the password, its long secret and the wrap key are kept in a 0600 \
            file in the store, so `credential-vault token` and `credential-vault whoami` open the login without a password. Anyone \
            who can read your files can then do the same; turn it off where that matters. A new password \
            (`credential-vault passwd`) keeps it on; `credential-vault register` turns it off.
            """
    )

    enum State: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @Argument(help: "on or off.")
    var state: State

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var passwords: PasswordOptions

    func run() async throws {
        let prompt = passwords.prompt
        try await VaultContext.with(connection, offline: state == .off) { context in
            let userId = try await context.resolveRegisteredUser()
            switch state {
            case .on:
                let password = try prompt.read("Password for \(userId): ")
                try await Progress.run("Turning device unlock on (Argon2id, key service)...") {
                    try await context.userStorage.enableDeviceUnlock(userId: userId, password: password)
                }
                Terminal.output(
                    "Device unlock is on for \(userId): `credential-vault token` needs no password on this device."
                )
            case .off:
                try await context.userStorage.disableDeviceUnlock(userId: userId)
                Terminal.output("Device unlock is off for \(userId): its secret is deleted.")
            }
        }
    }
}
