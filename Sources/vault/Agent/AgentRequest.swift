/// What a client asks the agent: one JSON line per connection, `{"op":"token"}`, `{"op":"status"}`,
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
}
