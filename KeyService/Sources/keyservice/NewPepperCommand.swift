import ArgumentParser
import KeyServiceCore

/// `keyservice new-pepper`: writes the next pepper version's file into a secrets directory.
struct NewPepperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new-pepper",
        abstract: "Write the next pepper version (pepper-N, 32 random bytes, mode 600) into --secrets-dir.",
        discussion: """
            Copy the new file to every instance's secrets directory, restart each with --pepper-version set to \
            the old version, then restart each without it: new keys then get the new pepper, and old keys move \
            to it at their next right-secret login (see keyservice peppers).
            """
    )

    @Option(help: ArgumentHelp("The secrets directory (mode 700, yours).", valueName: "dir"), completion: .directory)
    var secretsDir: String

    func run() throws {
        let version = try SecretsDirectory(path: secretsDir).addPepper()
        print("pepper \(version) written to \(secretsDir)/\(SecretsDirectory.pepperPrefix)\(version)")
    }
}
