import HTTPTypes

extension HTTPField.Name {
    /// `DPoP`: the proof header (RFC 9449 section 4.1).
    static let dpop = HTTPField.Name("DPoP")!
    /// `DPoP-Nonce`: a server's nonce (RFC 9449 section 8).
    static let dpopNonce = HTTPField.Name("DPoP-Nonce")!
}
