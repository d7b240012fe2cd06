import JWTKit

/// A DPoP proof's claims (RFC 9449 section 4.2); jwt-kit verifies the signature, ``DPoPVerifier`` the rest.
struct DPoPProofClaims: JWTPayload {
    let jti: String?
    let htm: String?
    let htu: String?
    let iat: Double?
    let ath: String?
    let nonce: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
