import ArgumentParser
import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `vault exec -- CMD ARGS…`: runs a command with a fresh access token in its environment, the way `aws-vault
/// exec` and `op run` do, and ends with the command's exit status.
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with a fresh access token in its environment; its exit status is passed through.",
        discussion: """
            vault exec -- sh -c 'curl -H "Authorization: Bearer $ACCESS_TOKEN" https://api.example'
            The token goes into the environment variable named by --env (default ACCESS_TOKEN), never into the \
            command's arguments, where every local user could read it. The command is found on PATH and keeps \
            this terminal. A command killed by a signal ends vault with 128 + that signal, as a shell would.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @Option(help: ArgumentHelp("The environment variable that carries the access token.", valueName: "name"))
    var env = "ACCESS_TOKEN"

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("The command and its arguments, after --.", valueName: "command")
    )
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("name the command to run after --") }
        let first = env.unicodeScalars.first
        guard let first, first == "_" || (first.isASCII && CharacterSet.letters.contains(first)),
            env.unicodeScalars.allSatisfy({ $0 == "_" || ($0.isASCII && CharacterSet.alphanumerics.contains($0)) })
        else {
            throw ValidationError("--env takes a variable name: letters, digits and _, not starting with a digit")
        }
    }

    func run() async throws {
        let prompt = unlocking.prompt
        var status: Int32 = 0
        try await VaultContext.with(connection) { context in
            let userId = try await context.resolveRegisteredUser()
            let (token, _) = try await context.unlock(
                userId: userId,
                prompt: prompt,
                allowDeviceUnlock: !unlocking.noDeviceUnlock
            )
            var environment = ProcessInfo.processInfo.environment
            environment[env] = token.token
            status = try await Self.run(command, environment: environment)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs `command` (its first word found on PATH by `env`) with this process's standard input, output and
    /// error, and returns its exit status (128 + the signal when a signal ended it; 127 when it is not found).
    private static func run(_ command: [String], environment: [String: String]) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--"] + command
        process.environment = environment
        do {
            try process.run()
        } catch {
            throw CLIError.other("cannot run \(command[0]): \(error.localizedDescription)")
        }
        // A blocking wait, on a thread of its own: never on Swift's cooperative pool.
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                process.waitUntilExit()
                let status = process.terminationStatus
                continuation.resume(returning: process.terminationReason == .uncaughtSignal ? 128 + status : status)
            }
        }
    }
}
