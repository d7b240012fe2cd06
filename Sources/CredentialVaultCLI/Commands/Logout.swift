import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault logout`: ends the stored login here (the running agent first), revokes the refresh token at the
/// issuer and says whether it did; `--clear-user` also removes the user's files.
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "End the stored login here and revoke it at the issuer; with --clear-user also remove the user.",
        discussion: """
            A running `credential-vault agent` for the user is ended first. Opening the refresh token to revoke it \
            needs the password (or device unlock). The refresh token is then erased from this device whatever the \
            issuer answers, and the last line says whether the issuer revoked it, has no revocation endpoint, or \
            refused (with its words) or could not be reached: then the token stays valid at the issuer until it \
            expires. Exit status 0 when the login is ended here. Without --clear-user the user stays listed but \
            the login no longer works: `credential-vault register` logs in again. --clear-user --local-only \
            removes the user's files without contacting the issuer (no password needed; use it for a locked key). \
            When the issuer offers RP-initiated logout (end_session_endpoint), a note on standard error gives the \
            URL that ends its browser session too (with the login's id_token_hint, sealed with the login, client_id, \
            and post_logout_redirect_uri when configured).
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
            let userId = try await context.resolveUser()
            // The agent hands out the session's access token without asking the store: it goes first.
            let address = context.agentAddress(userId: userId, environment: ProcessInfo.processInfo.environment)
            if await AgentClient.ask("lock", at: address)?.locked == true {
                Terminal.note("credential-vault: the agent for \(userId) is ended.")
            }
            let loggedIn = await context.userStorage.hasStoredRefreshToken(userId: userId)
            if localOnly || (clearUser && !loggedIn) {
                // A user whose login an earlier logout ended has nothing left to revoke.
                guard try await context.userStorage.availableUserIds.contains(userId) else {
                    throw VaultError(.notRegistered, reason: "No login is stored for \(userId).")
                }
                try await context.userStorage.clear(userId: userId)
                Terminal.output(
                    "Removed \(userId) from \(context.storeDirectory.path) "
                        + (loggedIn ? "(not revoked at the issuer)." : "(its login was already ended here).")
                )
                return
            }
            _ = try await context.resolveRegisteredUser()
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
            // The library ends the login here whatever the issuer answers; a revocation error only says what the
            // issuer did. A storage error (nothing ended here) still fails the command.
            var outcome = "and the issuer revoked it."
            // Asked before the login ends (and whatever the revocation does): the issuer's browser session lives on
            // until the user opens it.
            let browserLogout = try? await context.auth.endSessionURL()
            do {
                _ = try await Progress.run("Revoking the refresh token...") {
                    try await context.auth.logout(clearUser: clearUser)
                }
            } catch let error as VaultError {
                // Whatever went wrong at the issuer (a refusal, no answer, a discovery that failed), the outcome that
                // counts is the store's: when the login is ended here, say what the issuer did and exit 0; when it
                // is not (a storage error), fail.
                let ended =
                    clearUser
                    ? await !((try? context.userStorage.availableUserIds.contains(userId)) ?? true)
                    : await !context.userStorage.hasStoredRefreshToken(userId: userId)
                guard ended else { throw error }
                // "Logged out here, but the issuer refused ...: its words. The token stays valid ...".
                let prefix = "Logged out here, but "
                outcome =
                    error.kind == .revocationFailed || error.isNetworkError
                    ? "but "
                        + (error.reason.hasPrefix(prefix) ? String(error.reason.dropFirst(prefix.count)) : error.reason)
                    : "but it could not be revoked at the issuer (\(error.reason)); it stays valid there until it expires."
            }
            if clearUser {
                Terminal.output(
                    "Logged out \(userId): nothing of it is left in \(context.storeDirectory.path), \(outcome)"
                )
            } else {
                Terminal.output(
                    "Logged out \(userId): the refresh token is erased from \(context.storeDirectory.path), \(outcome) "
                        + "`credential-vault register` logs in again; `credential-vault logout --clear-user --local-only` "
                        + "removes the user."
                )
            }
            if let browserLogout {
                Terminal.note(
                    "credential-vault: the issuer's browser session is still open; to end it too, open: "
                        + browserLogout.absoluteString
                )
            }
        }
    }
}
