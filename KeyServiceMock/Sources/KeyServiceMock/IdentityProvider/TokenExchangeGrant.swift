import Foundation
import KeyServiceCore
import Logging

/// The token-exchange grant (RFC 8693): the client trades one of this provider's access tokens (`subject_token`,
/// `subject_token_type` access_token) for one whose `aud` is the `resource` (or `audience`) asked for, with the same
/// scope or a narrower one. The session must still be open; no refresh token is issued, nothing rotates.
struct TokenExchangeGrant {
    /// The grant type's URN.
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    /// The token type of an access token (RFC 8693 section 3).
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    let provider: IdentityProvider

    /// The answer for `fields`, sent by the client `clientId`.
    /// - Throws: ``RequestRefusal``: `invalid_request` for a missing or unknown token type or a subject token that is
    ///   not this client's live access token, `invalid_target` for a bad or missing resource, `invalid_scope` for a
    ///   wider scope.
    func answer(_ fields: FormFields, clientId: String, logger: Logger) throws -> TokenExchangeResponse {
        let now = provider.configuration.now()
        let subject = try fields.required("subject_token")
        guard try fields.required("subject_token_type") == Self.accessTokenType else {
            throw RequestRefusal.invalidRequest("only subject_token_type \(Self.accessTokenType) is supported")
        }
        if let requested = fields["requested_token_type"], requested != Self.accessTokenType {
            throw RequestRefusal.invalidRequest("only access tokens are issued (requested_token_type)")
        }
        guard let claims = provider.signer.verify(subject), claims.typ == "Bearer", claims.iss == provider.issuer,
            claims.azp == clientId, Double(claims.exp) > now.timeIntervalSince1970
        else {
            throw RequestRefusal.invalidRequest("the subject_token is not a live access token of this client")
        }
        guard let audience = try ResourceIndicator.audience(fields["resource"] ?? fields["audience"]) else {
            throw RequestRefusal.oauth("invalid_target", "a token exchange names the resource or audience")
        }
        if let requested = fields["scope"],
            !provider.scopes(of: requested).isSubset(of: provider.scopes(of: claims.scope))
        {
            throw RequestRefusal.oauth("invalid_scope", "a token exchange cannot widen the scope")
        }
        guard let session = provider.sessions.session(claims.sid), !session.revoked else {
            throw RequestRefusal.invalidGrant("the session of the subject_token has ended")
        }
        let issuedAt = Int(now.timeIntervalSince1970)
        var exchanged = claims
        exchanged.aud = audience
        exchanged.iat = issuedAt
        exchanged.exp = issuedAt + Int(provider.configuration.accessTokenLifetime)
        exchanged.jti = SessionStore.newTokenId()
        exchanged.scope = fields["scope"] ?? claims.scope
        logger.debug(
            "token issued, grant token-exchange",
            metadata: ["client_id": "\(clientId)", "aud": "\(audience)"]
        )
        return TokenExchangeResponse(
            accessToken: provider.signer.sign(exchanged),
            issuedTokenType: Self.accessTokenType,
            tokenType: "Bearer",
            expiresIn: Int(provider.configuration.accessTokenLifetime),
            scope: exchanged.scope
        )
    }
}
