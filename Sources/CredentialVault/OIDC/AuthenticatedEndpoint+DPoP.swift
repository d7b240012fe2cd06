import Foundation
import Logging

extension AuthenticatedEndpoint {
    /// A POST with a DPoP proof (RFC 9449 section 8): a refusal that asks for a nonce (`use_dpop_nonce` with a
    /// `DPoP-Nonce` header) is sent once more with it, and only once; any other answer is the answer. A `DPoP-Nonce`
    /// in any answer is kept for the next proof to this server.
    func sendWithDPoP(_ fields: [String: String]) async throws(VaultError) -> Result<HTTPResponse, TransportError> {
        let first = try await send(fields)
        guard let dpop, case .success(let answer) = first else { return first }
        guard let nonce = DPoPProofs.nonceRequested(by: answer) else {
            if let nonce = answer.headers["dpop-nonce"] { dpop.nonces.remember(nonce, for: url) }
            return first
        }
        dpop.nonces.remember(nonce, for: url)
        logger.debug(
            "the server asked for a DPoP nonce; sending the request once more with it",
            metadata: ["host": "\(host)"]
        )
        let second = try await send(fields)
        if case .success(let answer) = second, let nonce = answer.headers["dpop-nonce"] {
            dpop.nonces.remember(nonce, for: url)
        }
        return second
    }
}
