import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault token`: a fresh access token on standard output, for scripts.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a fresh access token (and nothing else) on standard output.",
        discussion: """
            For scripts: curl -H "Authorization: Bearer $(credential-vault token)" https://api.example
            Asks a running `credential-vault agent` for the store and user first (no password); otherwise uses device unlock \
            when it is on for the user, else the password, typed at the terminal or read with --password-stdin.
            With --json: {"token": the access token, "tokenType": "Bearer" or "DPoP", "userId": the login's user, \
            "expiresAt": Unix seconds or null}. A DPoP token goes as "Authorization: DPoP <token>" with a proof per \
            request: `credential-vault dpop-proof --method GET --url URL`.
            With --resource URL: a token for that API only (RFC 8707 resource on a refresh, or --token-exchange for \
            RFC 8693), --scope narrowing it; the login's own token is untouched. Such a token is always unlocked here \
            (device unlock or the password), never through the agent.
            With --min-ttl SECONDS: a token valid at least that long (the kept one is refreshed first when it expires \
            sooner; when the issuer's tokens never live that long, nothing is printed and the exit status is 70). \
            --force-refresh asks the issuer for a new token. Both work through the agent too.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var unlocking: UnlockOptions

    @OptionGroup var agent: AgentOptions

    @OptionGroup var freshness: TokenOptions

    @Flag(help: "Print {\"token\", \"tokenType\", \"userId\", \"expiresAt\"} as one JSON object.")
    var json = false

    @Option(help: "A token for this API only (RFC 8707 resource): an absolute https URL without a fragment.")
    var resource: String?

    @Option(name: .customLong("scope"), help: "With --resource: a scope of that token (repeat for more).")
    var scopes: [String] = []

    @Flag(help: "With --resource: ask by token exchange (RFC 8693) instead of a refresh with the resource.")
    var tokenExchange = false

    func validate() throws {
        if resource == nil, !scopes.isEmpty || tokenExchange {
            throw ValidationError("--scope and --token-exchange need --resource URL")
        }
        if resource != nil, freshness.minTTL != nil || freshness.forceRefresh {
            throw ValidationError("--min-ttl and --force-refresh apply to the login's own token, not with --resource")
        }
        if let resource, URL(string: resource)?.host == nil {
            throw ValidationError("--resource needs an absolute URL such as https://api.example.com/, not \(resource)")
        }
    }

    func run() async throws {
        guard let resource = resource.flatMap(URL.init(string:)) else {
            output(
                try await agent.servedToken(connection, unlocking: unlocking, requirement: freshness.requirement)
            )
            return
        }
        var served: ServedToken?
        try await VaultContext.with(connection) { context in
            let (_, viaDevice) = try await context.unlockRegisteredUser(unlocking)
            let token = try await context.auth.getAccessToken(
                resource: resource,
                scopes: scopes.isEmpty ? nil : scopes,
                method: tokenExchange ? .tokenExchange : .refresh
            )
            served = ServedToken(token, viaDevice: viaDevice, login: await context.auth.loginContext)
        }
        guard let served else { throw ExitCode(ExitStatus.failure.rawValue) }
        output(served)
    }

    private func output(_ served: ServedToken) {
        Terminal.output(json ? Format.json(served.json) : served.token)
    }
}
