import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault dpop-proof --method GET --url URL`: one DPoP proof (RFC 9449) for the stored login's key, for a
/// program that sends its own requests with a DPoP-bound token.
struct DPoPProof: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dpop-proof",
        abstract: "Print one DPoP proof for a request, signed by the stored login's key (and nothing else).",
        discussion: """
            For a login whose tokens are bound to a key (`credential-vault token --json` says "tokenType": "DPoP"). \
            Each request needs its own proof:
            curl -H "Authorization: DPoP $(credential-vault token)" \
            -H "DPoP: $(credential-vault dpop-proof --method GET --url https://api.example/r)" https://api.example/r
            The proof carries ath (the hash of the access token `credential-vault token` prints) unless \
            --token-request. Without an agent every unlock refreshes, so a separate `token` call gets another access \
            token: run an agent, or take both from --json: {"proof", "token"}. The key never leaves the sealed store. Asks \
            a running `credential-vault agent` first, as `credential-vault token` does.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @Option(help: ArgumentHelp("The request's HTTP method.", valueName: "method"))
    var method = "GET"

    @Option(help: ArgumentHelp("The request's URL (the proof names it without query or fragment).", valueName: "url"))
    var url: String

    @Flag(help: "A proof for a token request: without ath (the access token's hash).")
    var tokenRequest = false

    @Flag(help: "Print {\"proof\", \"token\"}: the proof and the access token its ath is made for.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "The server's DPoP-Nonce (from its use_dpop_nonce refusal) for the proof to carry.",
            valueName: "nonce"
        )
    )
    var nonce: String?

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            ["https", "http"].contains(scheme),
            parsed.host != nil
        else { throw ValidationError("--url takes an absolute http or https URL") }
        guard !method.isEmpty, method.unicodeScalars.allSatisfy({ $0.isASCII && CharacterSet.letters.contains($0) })
        else { throw ValidationError("--method takes an HTTP method, such as GET or POST") }
    }

    func run() async throws {
        // validate() checked it.
        let target = URL(string: url)!
        if !agent.noAgent, !tokenRequest {
            var served: (proof: String, token: String?)?
            try await Command.run {
                served = try await AgentClient.dpopProof(
                    connection,
                    method: method.uppercased(),
                    url: target,
                    nonce: nonce
                )
            }
            if let served { return output(served.proof, token: served.token) }
        }
        var served: (proof: String, token: String)?
        try await VaultContext.with(connection) { context in
            let (token, _) = try await context.unlockRegisteredUser(unlocking)
            let proof = try await context.auth.dpopProof(
                method: method.uppercased(),
                url: target,
                accessToken: tokenRequest ? nil : token.token,
                nonce: nonce
            )
            served = (proof, token.token)
        }
        guard let served else { throw ExitCode(ExitStatus.failure.rawValue) }
        output(served.proof, token: served.token)
    }

    private func output(_ proof: String, token: String?) {
        guard json else { return Terminal.output(proof) }
        Terminal.output(Format.json(.object(["proof": .string(proof), "token": token.map { .string($0) } ?? .null])))
    }
}
