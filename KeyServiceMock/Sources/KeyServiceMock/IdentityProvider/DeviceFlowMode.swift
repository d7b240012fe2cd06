/// The device authorization grant (RFC 8628), for ``KeyServiceMockConfiguration/deviceFlow``: discovery lists
/// `device_authorization_endpoint`, a client asks there for a device code and a user code, the user approves at the
/// verification page (a GET of `verification_uri_complete` approves as the first configured user, as the
/// authorization endpoint signs that user in without asking; `&action=deny` denies), and the client polls the token
/// endpoint with `urn:ietf:params:oauth:grant-type:device_code`.
///
/// The token endpoint answers by RFC 8628 section 3.5: `authorization_pending` until the user acts, `slow_down` on the
/// polls ``slowDownPolls`` names, `access_denied` once denied, `expired_token` once ``expiresIn`` has passed on the
/// server's clock (``KeyServiceMockConfiguration/now``), and the tokens once approved (the device code is then spent).
public struct DeviceFlowMode: Sendable {
    /// The `interval` of the device authorization answer, in seconds; nil leaves it out (the client then waits 5 s).
    public var interval: Int?
    /// The `expires_in` of the device authorization answer, in seconds.
    public var expiresIn: Int
    /// The polls of one device code (1 is the first) answered `slow_down` whatever else holds, so a test can check
    /// that a client adds 5 s for this and every later poll (RFC 8628 section 3.5).
    public var slowDownPolls: Set<Int>

    /// The device grant with the RFC's example timing (5 s, 30 minutes) by default.
    public init(interval: Int? = 5, expiresIn: Int = 1800, slowDownPolls: Set<Int> = []) {
        self.interval = interval
        self.expiresIn = expiresIn
        self.slowDownPolls = slowDownPolls
    }
}
