import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault git-credential get|store|erase`: a git credential helper (git's `gitcredentials`): the access
/// token goes to git as the password, or as a Bearer credential where git offers `capability[]=authtype`.
struct GitCredential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract:
            "A git credential helper: hands git a fresh access token (set it up with `credential-vault setup-git`).",
        discussion: """
            git runs it with get, store or erase and writes key=value lines on standard input, ending with a blank \
            line. get answers username (--username, default oauth2), password (the access token) and \
            password_expiry_utc; where git offers capability[]=authtype (git 2.46 and later) it answers \
            authtype=Bearer and credential (the token) instead. Only the answer goes to standard output. store and \
            erase keep nothing, so they read their input and do nothing (erase says so on standard error: git \
            calls it when the server refused the token). No token is sent over plain http except to a loopback \
            address. The token comes from a running `credential-vault agent`; without one, from device unlock or \
            the password (never read from standard input, which is git's: see CREDENTIAL_VAULT_ASKPASS). \
            The profile is --profile (or CREDENTIAL_VAULT_PROFILE) when given; else, once a profile of the config \
            file names "hosts", the one naming git's host, and for a host none names nothing is answered (git then \
            asks its next helper).
            """
    )

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "operation"))
    var operation: String

    @Option(help: "The username given to git with the token (the server's convention: oauth2, x-access-token, ...).")
    var username = "oauth2"

    @OptionGroup var helper: HelperOptions

    func validate() throws {
        guard ["get", "store", "erase"].contains(operation) else {
            throw ValidationError("git-credential takes get, store or erase, not \(operation)")
        }
        guard !username.isEmpty, username.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
            throw ValidationError("--username must be a non-empty line without control characters")
        }
    }

    func run() async throws {
        let request = try Command.catching { try GitCredentialRequest.read() }
        switch operation {
        case "get":
            try await get(request)
        case "erase":
            Terminal.note(
                "credential-vault: git says \(request.host ?? "the server") refused the token; nothing is stored "
                    + "to erase (the next get hands out the freshest token; --force-refresh asks for a new one)"
            )
        default:
            // store: the token came from here and is kept where it came from.
            break
        }
    }

    private func get(_ request: GitCredentialRequest) async throws {
        if request.protocolName != "https" {
            guard request.protocolName == "http", request.isLoopback else {
                throw Command.fail(
                    CLIError.usage(
                        "git asks for \(request.protocolName ?? "no protocol")://\(request.host ?? "?"): a token is "
                            + "sent over https only (plain http only to a loopback address)"
                    )
                )
            }
        }
        guard let options = try Command.catching({ try helper.connection(forHost: request.host) }) else {
            // git's convention for "not mine": nothing on standard output, exit 0; git asks its next helper.
            Terminal.note(
                "credential-vault: no profile names \(Format.escapingControlCharacters(request.host ?? "this host")) "
                    + "in its hosts; nothing is answered"
            )
            return
        }
        let served = try await helper.servedToken(for: options)
        var lines: [String] = []
        if request.capabilities.contains("authtype") {
            lines.append("capability[]=authtype")
            lines.append("authtype=Bearer")
            lines.append("credential=\(served.token)")
            lines.append("ephemeral=1")
        } else {
            lines.append("username=\(username)")
            lines.append("password=\(served.token)")
        }
        if let expiry = served.expireDate {
            lines.append("password_expiry_utc=\(Int(expiry.timeIntervalSince1970.rounded(.down)))")
        }
        Terminal.output(lines.joined(separator: "\n"))
    }
}
