public import CredentialVault
public import Foundation

/// A client without DPoP keys (a backend service's tokens are bearer tokens): no proofs, no nonces.
extension FHIRAccess {
    /// No proof: this client's tokens are bearer tokens.
    public func dpopProof(method: String, url: URL, accessToken: AccessToken) async throws(VaultError) -> String? {
        nil
    }

    /// No nonce is kept: this client sends no proofs.
    public func rememberDPoPNonce(from response: HTTPResponse, for url: URL) async -> Bool {
        false
    }
}
