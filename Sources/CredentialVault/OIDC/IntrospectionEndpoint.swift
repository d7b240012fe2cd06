import Foundation
import Logging

/// The introspection endpoint (RFC 7662): a form-encoded POST of a token, with the client's authentication.
struct IntrospectionEndpoint: Sendable {
    /// The endpoint, with the token endpoint's authentication methods.
    let endpoint: AuthenticatedEndpoint

    /// What the issuer says about `token`.
    /// - Throws: ``VaultError``: `.serverRefused` for an answer other than 200, `.unexpectedAnswer` for one that is
    ///   not an introspection answer, a network error when there is none.
    func introspect(_ token: String, typeHint: String?) async throws(VaultError) -> TokenIntrospection {
        var fields = ["token": token]
        if let typeHint { fields["token_type_hint"] = typeHint }
        let response: HTTPResponse
        switch try await endpoint.post(fields) {
        case .success(let answer): response = answer
        case .failure(let error): throw .network(error, service: "the issuer's introspection endpoint", origin: .issuer)
        }
        guard response.status == 200 else {
            throw VaultError(
                .serverRefused,
                "The introspection endpoint at \(endpoint.host) answered HTTP \(response.status)"
                    + "\(RevocationEndpoint.issuerWords(response.body)).",
                origin: .issuer,
                host: endpoint.host,
                httpStatus: response.status
            )
        }
        guard let object = try? UntrustedJSON.decode([String: JSONValue].self, from: response.body),
            let answer = TokenIntrospection(fields: object)
        else {
            throw VaultError(
                .unexpectedAnswer,
                "The introspection endpoint at \(endpoint.host) answered with no boolean active (RFC 7662 section 2.2).",
                origin: .issuer,
                host: endpoint.host,
                httpStatus: 200
            )
        }
        endpoint.logger.debug("the issuer introspected a token", metadata: ["active": "\(answer.active)"])
        return answer
    }
}
