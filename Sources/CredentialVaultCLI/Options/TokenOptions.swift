import ArgumentParser

/// `--min-ttl SECONDS` and `--force-refresh`: for every command that hands out an access token.
struct TokenOptions: ParsableArguments {
    @Option(
        name: .customLong("min-ttl"),
        help: ArgumentHelp(
            "A token valid at least this many more seconds: refreshed first when the kept one expires sooner.",
            valueName: "seconds"
        )
    )
    var minTTL: Int?

    @Flag(help: "Ask the issuer for a new access token, however long the kept one stays valid.")
    var forceRefresh = false

    func validate() throws {
        if let minTTL, !TokenRequirement.minimumValidityRange.contains(Double(minTTL)) {
            throw ValidationError("--min-ttl takes a number of seconds from 0 to 86400, not \(minTTL)")
        }
    }

    /// What these flags ask of the token.
    var requirement: TokenRequirement {
        TokenRequirement(minimumValidity: minTTL.map(Double.init), forceRefresh: forceRefresh)
    }
}
