import Foundation

/// The device authorization endpoint (RFC 8628 section 3.1): a form POST of `client_id` and `scope`, with the
/// client's authentication, answered with a device code, a user code and where the user goes.
struct DeviceAuthorizationEndpoint: Sendable {
    let endpoint: AuthenticatedEndpoint

    private struct Answer: Decodable {
        let device_code: String
        let user_code: String
        let verification_uri: String?
        /// Some servers (Google's, in its early days) named it so.
        let verification_url: String?
        let verification_uri_complete: String?
        let expires_in: Double
        let interval: Double?
    }

    private struct Failure: Decodable {
        let error: String
    }

    /// The device code (a secret, kept here) and what the user needs; `parameters` go with the request besides the
    /// scope (the configuration's `max_age`, `acr_values`, `login_hint` and extra parameters).
    /// - Throws: ``VaultError``: `isNetworkError`; `.openIDConnectFailed` for a refusal or an answer that is not one
    ///   (a verification URI that is neither https nor loopback included: the user would type a code there).
    func authorize(
        scopes: [String],
        parameters: [String: String] = [:]
    ) async throws(VaultError) -> (deviceCode: String, shown: DeviceAuthorization) {
        let response: HTTPResponse
        var fields = parameters
        fields["scope"] = scopes.joined(separator: " ")
        switch try await endpoint.post(fields) {
        case .success(let answer): response = answer
        case .failure(let error):
            throw .network(error, service: "the issuer's device authorization endpoint", origin: .issuer)
        }
        guard response.status == 200 else {
            let code = (try? UntrustedJSON.decode(Failure.self, from: response.body)).map {
                " (\(VaultError.printable($0.error)))"
            }
            throw .openIDConnectFailed(
                "the device authorization endpoint at \(endpoint.host) refused the request with HTTP "
                    + "\(response.status)\(code ?? "")"
            )
        }
        guard let answer = try? UntrustedJSON.decode(Answer.self, from: response.body),
            !answer.device_code.isEmpty, !answer.user_code.isEmpty, answer.expires_in.isFinite,
            let verification = (answer.verification_uri ?? answer.verification_url).flatMap(Self.pageURL)
        else {
            throw .openIDConnectFailed(
                "the device authorization endpoint at \(endpoint.host) gave no usable answer (RFC 8628 section 3.2)"
            )
        }
        // Clamped before it becomes an Int: a huge number must not trap.
        let interval = answer.interval.flatMap {
            $0.isFinite ? Int(min(max(1, $0.rounded(.up)), Double(DeviceAuthorization.maximumInterval))) : nil
        }
        return (
            answer.device_code,
            DeviceAuthorization(
                verificationURI: verification,
                userCode: VaultError.printable(answer.user_code, limit: 64),
                verificationURIComplete: answer.verification_uri_complete.flatMap(Self.pageURL),
                expiresIn: Int(min(max(answer.expires_in, 0), Double(DeviceAuthorization.maximumLifetime))),
                interval: interval ?? DeviceAuthorization.defaultInterval
            )
        )
    }

    /// A page the user is sent to: an absolute https URL, or a loopback one (a local issuer).
    private static func pageURL(_ text: String) -> URL? {
        guard let url = URL(string: text), url.host != nil, url.isSecureOrLoopback else { return nil }
        return url
    }
}
