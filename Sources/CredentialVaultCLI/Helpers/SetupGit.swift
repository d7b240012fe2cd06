import ArgumentParser
import Foundation

/// `credential-vault setup-git --host HOST`: makes git ask `credential-vault git-credential` for that host's https
/// credentials, in the global git configuration.
struct SetupGit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup-git",
        abstract: "Make git use `credential-vault git-credential` for one https host.",
        discussion: """
            Writes two lines with `git config --global`: credential.https://HOST.helper set empty (so no other \
            helper is asked for that host first) and the helper itself, naming this program by its full path. \
            With --profile NAME the helper line names that profile. With --dry-run the two commands are printed \
            and nothing is changed.
            """
    )

    @Option(help: ArgumentHelp("The host, with its port when it is not 443 (git.example.com:8443).", valueName: "host"))
    var host: String

    @Option(help: "The username given to git with the token (default oauth2).")
    var username: String?

    @Option(
        help: ArgumentHelp(
            "The profile of the config file whose token git gets for this host (written into the helper line).",
            valueName: "name"
        )
    )
    var profile: String?

    @Flag(help: "Print the git config commands instead of running them.")
    var dryRun = false

    func validate() throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-:[]_"))
        guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.isASCII && allowed.contains($0) }) else {
            throw ValidationError("--host takes a host name and an optional port (git.example.com:8443), not \(host)")
        }
        if let username, username.isEmpty || !username.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) {
            throw ValidationError("--username takes one word of visible ASCII")
        }
        if let profile, !ConfigFileContents.isValidProfileName(profile) {
            throw ValidationError("--profile takes a profile's name: 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }

    /// The helper line: a shell command (`!`), so a path with spaces works, each word quoted for the shell.
    var helperValue: String {
        let program = Bundle.main.executableURL?.path ?? CommandLine.arguments[0]
        var words = [program, "git-credential"]
        if let username { words += ["--username", username] }
        if let profile { words += ["--profile", profile] }
        return "!" + words.map(Self.shellQuoted).joined(separator: " ")
    }

    /// The git configuration key for the host.
    var key: String { "credential.https://\(host).helper" }

    func run() async throws {
        let commands = [
            ["git", "config", "--global", "--replace-all", key, ""],
            ["git", "config", "--global", "--add", key, helperValue],
        ]
        if dryRun {
            Terminal.output(commands.map { $0.map(Self.shellQuoted).joined(separator: " ") }.joined(separator: "\n"))
            return
        }
        for command in commands {
            let status: Int32
            do {
                let pid = try ChildProcess.spawn(command, environment: ProcessInfo.processInfo.environment)
                status = await ChildProcess.wait(pid)
            } catch let error as UnixSocket.Failure {
                throw Command.fail(CLIError.other("cannot run git: \(error.description)"))
            }
            guard status == 0 else {
                throw Command.fail(CLIError.other("`\(command.joined(separator: " "))` failed with status \(status)"))
            }
        }
        Terminal.note("credential-vault: git now asks credential-vault for https://\(host) credentials (\(key))")
    }

    /// `word` quoted for a POSIX shell.
    static func shellQuoted(_ word: String) -> String {
        if !word.isEmpty,
            word.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/.-_:=+@%,".unicodeScalars.contains($0))
            })
        {
            return word
        }
        return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
