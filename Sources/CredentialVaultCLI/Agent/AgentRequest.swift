/// What a client asks the agent: one JSON line per connection, `{"op":"token"}` (with `minTTL` and `forceRefresh`
/// when the caller asks for them), `{"op":"status"}`,
/// `{"op":"lock"}` or `{"op":"dpop-proof","method":"GET","url":"https://…"}`.
struct AgentRequest: Codable, Sendable {
    /// `token`, `status`, `lock` or `dpop-proof`.
    let op: String
    /// For `dpop-proof`: the request's method.
    var method: String? = nil
    /// For `dpop-proof`: the request's URL.
    var url: String? = nil
    /// For `dpop-proof`: the server's `DPoP-Nonce`, when the caller got one.
    var nonce: String? = nil
    /// For `token`: seconds the token must stay valid (`--min-ttl`).
    var minTTL: Double? = nil
    /// For `token`: a new token from the issuer (`--force-refresh`).
    var forceRefresh: Bool? = nil

    /// A `token` request for a token that meets `requirement`.
    static func token(_ requirement: TokenRequirement) -> AgentRequest {
        AgentRequest(
            op: "token",
            minTTL: requirement.minimumValidity,
            forceRefresh: requirement.forceRefresh ? true : nil
        )
    }

    /// What a `token` request asks of its token.
    var requirement: TokenRequirement {
        TokenRequirement(minimumValidity: minTTL, forceRefresh: forceRefresh ?? false)
    }
}
