import ArgumentParser
import CredentialVault
import Foundation

/// `vault login`: the password opens the stored refresh token; the rotated one is sealed again.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the password: open the stored login and get a fresh access token.",
        discussion: """
            Opens the stored refresh token with the password (Argon2id, then the key service), redeems it at the \
            issuer and seals the rotated refresh token again. Three wrong passwords in a row lock the key for good.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Read the password as one line from standard input.")
    var passwordStdin = false

    @Flag(help: "Also turn device unlock on, so `vault token` needs no password on this device.")
    var rememberDevice = false

    func run() async throws {
        let prompt = PasswordPrompt(fromStandardInput: passwordStdin)
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let password = try prompt.read("Password for \(userId): ")
            let token = try await Progress.run("Unlocking (Argon2id, key service, token endpoint)...") {
                try await context.auth.loginWithPassword(userId: userId, password: password)
            }
            if rememberDevice {
                try await Progress.run("Turning device unlock on...") {
                    try await context.userStorage.enableDeviceUnlock(userId: userId, password: password)
                }
            }
            Terminal.output("Logged in as \(userId); the access token is valid \(Format.validity(token.expireDate)).")
            if rememberDevice {
                Terminal.output("Device unlock is on: `vault token` needs no password on this device.")
            }
        }
    }
}

/// `vault token`: a fresh access token on standard output, for scripts.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a fresh access token (and nothing else) on standard output.",
        discussion: """
            For scripts: curl -H "Authorization: Bearer $(vault token)" https://api.example
            Uses device unlock when it is on for the user (no password); otherwise the password, typed at the \
            terminal or read with --password-stdin.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Read the password as one line from standard input.")
    var passwordStdin = false

    @Flag(help: "Ask for the password even when device unlock is on.")
    var noDeviceUnlock = false

    func run() async throws {
        let prompt = PasswordPrompt(fromStandardInput: passwordStdin)
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, _) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: !noDeviceUnlock
            )
            Terminal.output(token.token)
        }
    }
}

/// `vault whoami`: the claims of a fresh access token.
struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the claims of a fresh access token (a table, or JSON with --json).",
        discussion: "Unlocks like `vault token`: device unlock when it is on, otherwise the password."
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Read the password as one line from standard input.")
    var passwordStdin = false

    @Flag(help: "Ask for the password even when device unlock is on.")
    var noDeviceUnlock = false

    @Flag(help: "Print the claims as one JSON object.")
    var json = false

    func run() async throws {
        let prompt = PasswordPrompt(fromStandardInput: passwordStdin)
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, viaDevice) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: !noDeviceUnlock
            )
            if json {
                Terminal.output(Format.json(.object(token.claims)))
            } else {
                Terminal.output("user \(token.userId) (unlocked with \(viaDevice ? "device unlock" : "the password"))")
                Terminal.output(Format.table(token.claims))
            }
        }
    }
}

/// `vault passwd`: a new password (and a new key) for the stored login.
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

    @Flag(help: "Read the passwords as lines from standard input.")
    var passwordStdin = false

    func run() async throws {
        let prompt = PasswordPrompt(fromStandardInput: passwordStdin)
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

/// `vault logout`: revoke the refresh token at the issuer; `--clear-user` also removes the stored login.
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revoke the stored login at the issuer; with --clear-user also remove it from this device.",
        discussion: """
            Opening the refresh token to revoke it needs the password (or device unlock). Without --clear-user \
            the user stays listed but the login no longer works: `vault register` logs in again. \
            --clear-user --local-only removes the user's files without contacting the issuer (no password \
            needed; use it for a locked key).
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Also delete the user's sealed login, device secret and counters from the store.")
    var clearUser = false

    @Flag(help: "With --clear-user: do not revoke at the issuer; no password needed.")
    var localOnly = false

    @Flag(help: "Read the password as one line from standard input.")
    var passwordStdin = false

    func validate() throws {
        if localOnly && !clearUser {
            throw ValidationError("--local-only only makes sense with --clear-user")
        }
    }

    func run() async throws {
        let prompt = PasswordPrompt(fromStandardInput: passwordStdin)
        try await VaultContext.with(connection, offline: localOnly) { context in
            let userId = try await context.resolveRegisteredUser()
            if localOnly {
                try await context.userStorage.clear(userId: userId)
                Terminal.output("Removed \(userId) from \(context.storeDirectory.path) (not revoked at the issuer).")
                return
            }
            do {
                _ = try await context.unlock(userId: userId, prompt: prompt)
            } catch let error as VaultError where error.isKeyLocked && clearUser {
                try await context.userStorage.clear(userId: userId)
                Terminal.output(
                    "The key of \(userId) is locked, so the login could not be revoked; it is removed from "
                        + "\(context.storeDirectory.path)."
                )
                return
            }
            do {
                try await Progress.run("Revoking the refresh token...") {
                    try await context.auth.logout(clearUser: clearUser)
                }
            } catch let error as VaultError {
                guard case .auth(.revocationFailed) = error else { throw error }
                throw CLIError(
                    status: .unavailable,
                    description: (clearUser ? "removed \(userId) from this device, but " : "")
                        + CLIError.from(error).description
                )
            }
            if clearUser {
                Terminal.output(
                    "Logged out \(userId): the refresh token is revoked and nothing of \(userId) is left in "
                        + "\(context.storeDirectory.path)."
                )
            } else {
                Terminal.output(
                    "Logged out \(userId): the refresh token is revoked at the issuer. `vault register` logs in "
                        + "again; `vault logout --clear-user --local-only` removes the stored login."
                )
            }
        }
    }
}
