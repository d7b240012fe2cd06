public import Foundation
import Logging

extension Auth {
    /// Whether a new login binds its tokens to a key: as ``VaultConfiguration/dpop`` says, by default when the issuer
    /// lists ES256 in `dpop_signing_alg_values_supported`.
    func usesDPoP(_ metadata: ProviderMetadata) -> Bool {
        switch configuration.dpop {
        case .always: true
        case .never: false
        case .whenOffered: metadata.dpopSigningAlgorithms?.contains("ES256") == true
        }
    }

    /// The login's key to keep: `key` when the issuer bound the tokens to it (`token_type` `DPoP`); an issuer that
    /// answered with a bearer token ignored the proof, and the key is dropped.
    func boundKey(_ key: DPoPKey?, _ response: TokenResponse) -> DPoPKey? {
        guard let key else { return nil }
        guard response.context["token_type"]?.stringValue?.lowercased() == "dpop" else {
            configuration.logger.debug("the issuer answered the DPoP proof with a bearer token; no key is kept")
            return nil
        }
        return key
    }

    /// The proofs signed by `key`, with this `Auth`'s nonces and clock.
    nonisolated func dpopProofs(for key: DPoPKey) -> DPoPProofs {
        DPoPProofs(key: key, nonces: dpopNonces, now: configuration.now)
    }

    /// `request` with a fresh access token: `Authorization: Bearer <token>`, or for a token bound to the login's key
    /// `Authorization: DPoP <token>` and a `DPoP` proof for the request's method and URL, with `ath` and the
    /// server's newest nonce (RFC 9449 section 7). Send only to the resource server the token is meant for.
    /// - Throws: ``VaultError``: `.notLoggedIn`, and the errors of ``getAccessToken(forceRefresh:)``.
    public func authorizing(_ request: HTTPRequest) async throws(VaultError) -> HTTPRequest {
        let token = try await getAccessToken()
        var request = request
        if token.isDPoPBound, let key = session?.refreshToken.dpopKey {
            request.headers["Authorization"] = "\(AccessToken.dpopType) \(token.token)"
            request.headers["DPoP"] = dpopProofs(for: key)
                .proof(method: request.method, url: request.url, accessToken: token.token)
        } else {
            request.headers["Authorization"] = "Bearer \(token.token)"
        }
        return request
    }

    /// Sends `request` authorized by ``authorizing(_:)``; a resource server's refusal that asks for a DPoP nonce
    /// (`WWW-Authenticate: DPoP error="use_dpop_nonce"` with `DPoP-Nonce`) is answered once, and only once, with a new
    /// proof carrying that nonce. Any other answer is returned as it is.
    /// - Throws: ``VaultError``: the errors of ``authorizing(_:)``; `isNetworkError` when no answer came.
    public func sendAuthorized(_ request: HTTPRequest) async throws(VaultError) -> HTTPResponse {
        var answer = try await send(try await authorizing(request))
        if rememberDPoPNonce(from: answer, for: request.url) {
            configuration.logger.debug("the resource server asked for a DPoP nonce; sending the request once more")
            answer = try await send(try await authorizing(request))
            _ = rememberDPoPNonce(from: answer, for: request.url)
        }
        return answer
    }

    private func send(_ request: HTTPRequest) async throws(VaultError) -> HTTPResponse {
        do {
            return try await transport.send(request, logger: configuration.logger)
        } catch {
            throw .network(error, service: "the resource server", origin: .issuer)
        }
    }

    /// Keeps the `DPoP-Nonce` a server gave in `response` to a request to `url`, for the next proof to it.
    /// - Returns: whether `response` refused the request for want of that nonce (`use_dpop_nonce`): then send it
    ///   once more with a new proof, and only once.
    @discardableResult
    public nonisolated func rememberDPoPNonce(from response: HTTPResponse, for url: URL) -> Bool {
        guard let nonce = response.headers["dpop-nonce"] else { return false }
        dpopNonces.remember(nonce, for: url)
        return DPoPProofs.nonceRequested(by: response) != nil
    }

    /// A DPoP proof signed by the stored login's key for one `method` request to `url`; with `accessToken` (a resource
    /// request) it carries `ath`; with `nonce` (from the server's `DPoP-Nonce`) that nonce, which is also kept for the
    /// next proof to that server. For a program that sends its own requests (the CLI's `dpop-proof`).
    /// - Throws: ``VaultError``: `.notLoggedIn`; `.invalidConfiguration` when the login is not bound to a key.
    public func dpopProof(
        method: String,
        url: URL,
        accessToken: String? = nil,
        nonce: String? = nil
    ) throws(VaultError) -> String {
        guard let current = session else { throw .notLoggedIn }
        guard let key = current.refreshToken.dpopKey else { throw .notDPoPBound }
        if let nonce { dpopNonces.remember(nonce, for: url) }
        return dpopProofs(for: key).proof(method: method, url: url, accessToken: accessToken, nonce: nonce)
    }
}
