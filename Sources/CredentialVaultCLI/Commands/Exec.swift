import ArgumentParser
import CredentialVault
import Foundation
import VaultPOSIX

/// `credential-vault exec -- CMD ARGS…`: runs a command with a fresh access token in its environment, the way `aws-vault
/// exec` and `op run` do, and ends with the command's exit status.
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with a fresh access token in its environment; its exit status is passed through.",
        discussion: """
            credential-vault exec -- sh -c 'curl -H "Authorization: Bearer $ACCESS_TOKEN" https://api.example'
            The token goes into the environment variable named by --env (default ACCESS_TOKEN), never into the \
            command's arguments, where every local user could read it. The command is found on PATH (127 when it \
            is not), keeps this terminal and gets no descriptor but 0, 1 and 2. The token comes from a running `credential-vault agent` when there is one, as for `credential-vault token`. \
            A command killed by a signal ends credential-vault with 128 + that signal, as a shell would. \
            A DPoP login's key stays in the store: the command gets the access token only and asks \
            `credential-vault dpop-proof` for a proof per request.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @OptionGroup var freshness: TokenOptions

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
        let served = try await agent.servedToken(
            connection,
            unlocking: unlocking,
            requirement: freshness.requirement
        )
        // The command runs after the embedded key service (if any) has stopped: it may run for long.
        var environment = ProcessInfo.processInfo.environment
        environment[env] = served.token
        let pid: pid_t
        do {
            // Only 0, 1 and 2: no descriptor of this process (a socket, the store's lock, a pipe of whoever started us)
            // reaches the command.
            pid = try ChildProcess.spawn(command, environment: environment, onlyStandardDescriptors: true)
        } catch let error as UnixSocket.Failure {
            Terminal.note("credential-vault: \(error.description)")
            throw ExitCode(error.code == ENOENT ? 127 : 126)
        }
        // Like system(3): Ctrl-C and Ctrl-\ are the command's to handle; vault waits for its status.
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        let exit = await ChildProcess.wait(pid)
        if exit != 0 { throw ExitCode(exit) }
    }
}
