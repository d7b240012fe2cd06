/// What a client asks the agent: one JSON line per connection, `{"op":"token"}`, `{"op":"status"}` or
/// `{"op":"lock"}`.
struct AgentRequest: Codable, Sendable {
    /// `token`, `status` or `lock`.
    let op: String
}
