import ArgumentParser

/// The commands other programs run again and again (`token`, `git-credential`, `kubectl-credential`,
/// `docker-credential` and `fhir get`), parsed as commands of their own. Parsed from `credential-vault`, ArgumentParser
/// first builds the tree of every subcommand, which takes about as long as the agent's whole answer; these
/// commands have no use for it.
///
/// Only an argument list that parses this way is taken; anything else (help, a mistake in the arguments) goes the
/// usual way, so its messages and usage lines stay the usual ones. A command taken here runs exactly as it would
/// there: the same type, options and `run()`, and its failures end the process as ``CredentialVaultCommand``'s do.
enum HotCommand {
    /// The command `arguments` (without the program's name) name, parsed; nil when they name none of these or do
    /// not parse as one.
    static func parse(_ arguments: [String]) async -> (any AsyncParsableCommand)? {
        let type: any AsyncParsableCommand.Type
        var rest = arguments.dropFirst()
        switch arguments.first {
        case "token": type = Token.self
        case "git-credential": type = GitCredential.self
        case "kubectl-credential": type = KubectlCredential.self
        case "docker-credential": type = DockerCredential.self
        case "fhir" where rest.first == "get":
            type = FhirGet.self
            rest = rest.dropFirst()
        default: return nil
        }
        return (try? await type.asyncParseAsRoot(Array(rest))) as? any AsyncParsableCommand
    }
}
