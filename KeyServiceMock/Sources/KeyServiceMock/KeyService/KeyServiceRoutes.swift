import Foundation
import Hummingbird
import Logging
import VaultCrypto

/// The TIM KeyService v1 endpoints: `createkey` and `key`, answering exactly as the reference says.
struct KeyServiceRoutes: Sendable {
    let store: KeyStore

    func add(to router: Router<MockRequestContext>, under path: String) {
        router.post("\(path)/createkey") { request, context in
            await answer(context) {
                var request = request
                let body = try await decode(&request)
                guard let secret = body.secret else {
                    throw RequestRefusal.invalidRequest("the field secret is missing")
                }
                do {
                    return .json(KeyResponse(try store.createKey(secret: secret)))
                } catch {
                    context.logger.error("unable to create key", metadata: ["error": "\(error)"])
                    return .json(
                        status: .internalServerError,
                        ["error": "unable_to_create_key", "error_description": "the key could not be stored"]
                    )
                }
            }
        }
        router.post("\(path)/key") { request, context in
            await answer(context) {
                var request = request
                let body = try await decode(&request)
                guard let keyId = body.keyid else {
                    throw RequestRefusal.invalidRequest("the field keyid is missing")
                }
                let credential: KeyCredential
                switch (body.secret, body.longsecret) {
                case (let secret?, nil): credential = .secret(secret)
                case (nil, let longSecret?): credential = .longSecret(longSecret)
                case (nil, nil):
                    throw RequestRefusal.invalidRequest("one of the fields secret and longsecret is needed")
                case (_?, _?): throw RequestRefusal.invalidRequest("send secret or longsecret, not both")
                }
                switch try store.key(keyId: keyId, credential: credential) {
                case .granted(let grant):
                    return .json(KeyResponse(grant))
                case .wrongSecret:
                    return .json(status: .unauthorized, ["error": "bad_password", "error_description": "wrong secret"])
                case .locked:
                    // TIM deployments answer a locked key with 204 and no body.
                    return Response(status: .noContent)
                case .missing:
                    return .json(
                        status: .notFound,
                        ["error": "key_missing", "error_description": "no key with this keyid"]
                    )
                }
            }
        }
    }

    /// Runs `handler`; a refused request gets its 400 and a failure of the store a 500.
    private func answer(
        _ context: MockRequestContext,
        _ handler: () async throws -> Response
    ) async -> Response {
        do {
            return try await handler()
        } catch let refusal as RequestRefusal {
            return refusal.response
        } catch {
            context.logger.error("key service request failed", metadata: ["error": "\(error)"])
            return .json(
                status: .internalServerError,
                ["error": "server_error", "error_description": "internal error"]
            )
        }
    }

    private func decode(_ request: inout Request) async throws -> KeyServiceRequest {
        let body = try await request.collectLimitedBody()
        let decoded: KeyServiceRequest
        do {
            decoded = try JSONDecoder().decode(KeyServiceRequest.self, from: body)
        } catch {
            throw RequestRefusal.invalidRequest("the body is not a JSON object of string fields")
        }
        for value in [decoded.keyid, decoded.secret, decoded.longsecret] where value?.isEmpty == true {
            throw RequestRefusal.invalidRequest("a field is an empty string")
        }
        return decoded
    }
}

/// A request body: a flat JSON object of strings; unknown fields are ignored.
private struct KeyServiceRequest: Decodable {
    let keyid: String?
    let secret: String?
    let longsecret: String?
}

/// The 200 body of `createkey` and `key`.
private struct KeyResponse: Encodable {
    let keyid: String
    let key: String
    let longsecret: String

    init(_ grant: KeyGrant) {
        keyid = grant.keyId
        key = Base64.encode(grant.key)
        longsecret = grant.longSecret
    }
}
