import ArgumentParser
import CredentialVault
import Foundation

/// Running a command body with `credential-vault`'s error handling.
enum Command {
    /// Runs `body`; prints any failure as `credential-vault: message` on standard error and exits with its status.
    static func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as ExitCode {
            throw error
        } catch {
            throw fail(CLIError.from(error))
        }
    }

    /// Runs `body`; a failure is printed and becomes its exit status, as in ``run(_:)``.
    static func catching<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ExitCode {
            throw error
        } catch {
            throw fail(CLIError.from(error))
        }
    }

    static func fail(_ error: CLIError) -> ExitCode {
        Terminal.note("credential-vault: \(error.description)")
        return ExitCode(error.status)
    }

    static func guarded(
        _ make: () async throws -> VaultContext?,
        body: (VaultContext) async throws -> Void
    ) async throws {
        var context: VaultContext?
        do {
            context = try await make()
            if let context { try await body(context) }
            await context?.stop()
        } catch let error as ExitCode {
            await context?.stop()
            throw error
        } catch {
            await context?.stop()
            let user = context?.userId
            var attempts: Int?
            if let user, let context { attempts = await context.userStorage.wrongPasswordsKnownHere(userId: user) }
            throw fail(CLIError.from(error, userId: user, attempts: attempts))
        }
    }
}
