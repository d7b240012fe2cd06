import Foundation
import Logging

/// An issuer endpoint the client authenticates at (RFC 6749 section 2.3): the token, revocation and introspection
/// endpoints all POST a form with the client's ``ClientAuthentication``.
struct AuthenticatedEndpoint: Sendable {
    let url: URL
    let clientId: String
    let authentication: ClientAuthentication
    /// The endpoint's `..._auth_methods_supported`, when discovery lists it.
    let supportedMethods: [String]?
    /// What a private key's assertion names as `aud` (the token endpoint, or the issuer, whichever endpoint this
    /// is) and the algorithms it may be signed with; nil: this endpoint is the token endpoint, and lists none.
    var audiences: AssertionAudiences? = nil
    let now: @Sendable () -> Date
    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger
    /// The login's DPoP proofs (RFC 9449), when its tokens are bound to a key: every request carries one
    /// (``AuthenticatedEndpoint+DPoP.swift``).
    var dpop: DPoPProofs? = nil

    var host: String { url.displayHost }

    /// POSTs `fields`, form-encoded, with the client's authentication.
    /// - Returns: the answer, whatever its status, or the transport's failure for the caller to name.
    /// - Throws: ``VaultError`` only when the request cannot be made (a client key that does not sign).
    func post(_ fields: [String: String]) async throws(VaultError) -> Result<HTTPResponse, TransportError> {
        guard dpop != nil else { return try await send(fields) }
        return try await sendWithDPoP(fields)
    }

    /// One POST of `fields`, with the client's authentication (made anew each time: an assertion's `jti` is fresh)
    /// and, with DPoP, a fresh proof.
    func send(_ fields: [String: String]) async throws(VaultError) -> Result<HTTPResponse, TransportError> {
        var request = try await authentication.formRequest(
            to: url,
            fields: fields,
            clientId: clientId,
            supported: supportedMethods,
            audiences: audiences
                ?? AssertionAudiences(tokenEndpoint: url, issuer: url.absoluteString, signingAlgorithms: nil),
            now: now(),
            timeout: timeout
        )
        if let dpop { request.headers["DPoP"] = dpop.proof(method: "POST", url: url) }
        do {
            return .success(try await transport.send(request, logger: logger))
        } catch {
            return .failure(error)
        }
    }
}
