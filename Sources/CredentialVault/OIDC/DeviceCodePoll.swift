/// One answer of the token endpoint to a device code (RFC 8628 section 3.5) that does not end the login.
enum DeviceCodePoll: Sendable {
    /// The tokens: the user approved.
    case issued(TokenResponse)
    /// `authorization_pending`: poll again after the interval.
    case pending
    /// `slow_down`: poll again after the interval, which grows by 5 s for this and every later poll.
    case slowDown
}
