import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault logout`: revoke the refresh token at the issuer; `--clear-user` also removes the stored login.
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revoke the stored login at the issuer; with --clear-user also remove it from this device.",
        discussion: """
            Opening the refresh token to revoke it needs the password (or device unlock). Without --clear-user \
            the user stays listed but the login no longer works: `credential-vault register` logs in again. \
            --clear-user --local-only removes the user's files without contacting the issuer (no password \
            needed; use it for a locked key).
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Also delete the user's sealed login, device secret and counters from the store.")
    var clearUser = false

    @Flag(help: "With --clear-user: do not revoke at the issuer; no password needed.")
    var localOnly = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if localOnly && !clearUser {
            throw ValidationError("--local-only only makes sense with --clear-user")
        }
    }

    func run() async throws {
        let prompt = passwords.prompt
        try await VaultContext.with(connection, offline: localOnly) { context in
            let userId = try await context.resolveRegisteredUser()
            if localOnly {
                try await context.userStorage.clear(userId: userId)
                Terminal.output("Removed \(userId) from \(context.storeDirectory.path) (not revoked at the issuer).")
                return
            }
            do {
                _ = try await context.unlock(userId: userId, prompt: prompt)
            } catch let error as VaultError where error.isKeyLockConfirmed && clearUser {
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
            } catch let error as VaultError where clearUser && (error.kind == .revocationFailed || error.isNetworkError)
            {
                let failure = CLIError.from(error)
                throw CLIError(status: failure.status, description: "removed \(userId) from this device. \(failure)")
            }
            if clearUser {
                Terminal.output(
                    "Logged out \(userId): the refresh token is revoked and nothing of \(userId) is left in "
                        + "\(context.storeDirectory.path)."
                )
            } else {
                Terminal.output(
                    "Logged out \(userId): the refresh token is revoked at the issuer. `credential-vault register` logs in "
                        + "again; `credential-vault logout --clear-user --local-only` removes the stored login."
                )
            }
        }
    }
}
