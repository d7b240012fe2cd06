import Foundation
import Hummingbird
import Logging
import VaultCrypto

/// The TIM KeyService v1 endpoints: `createkey` and `key`, answering exactly as the reference says.
///
/// Each decision is logged at `.debug` with the key id, never with a secret, long secret or key.
struct KeyServiceRoutes: Sendable {
    let store: KeyStore

    func add(to router: Router<MockRequestContext>, layout: Layout) {
        router.post(RouterPath(layout.path(Layout.createKey))) { request, context in
            var request = request
            let body = try await decode(&request)
            guard let secret = body.secret else {
                throw RequestRefusal.invalidRequest("the field secret is missing")
            }
            let grant: KeyGrant
            do {
                grant = try store.createKey(secret: secret)
            } catch {
                context.logger.error("unable to create key", metadata: ["error": "\(error)"])
                throw RequestRefusal(
                    status: .internalServerError,
                    error: "unable_to_create_key",
                    description: "the key could not be stored"
                )
            }
            context.logger.debug("key created", metadata: ["keyid": "\(grant.keyId)"])
            return Response.json(KeyResponse(grant))
        }
        router.post(RouterPath(layout.path(Layout.key))) { request, context in
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
            var logger = context.logger
            logger[metadataKey: "keyid"] = "\(keyId)"
            logger[metadataKey: "credential"] = "\(credential.fieldName)"
            switch try store.key(keyId: keyId, credential: credential) {
            case .granted(let grant):
                logger.debug("key granted")
                return Response.json(KeyResponse(grant))
            case .wrongSecret(let failures):
                let lock = failures >= KeyStore.attemptsBeforeLock ? ": key now locked" : ""
                logger.debug("wrong secret, \(failures) of \(KeyStore.attemptsBeforeLock)\(lock)")
                return Response.json(
                    status: .unauthorized,
                    ["error": "bad_password", "error_description": "wrong secret"]
                )
            case .locked:
                logger.debug("key locked")
                // TIM deployments answer a locked key with 204 and no body.
                return Response(status: .noContent)
            case .missing:
                logger.debug("unknown keyid")
                return Response.json(
                    status: .notFound,
                    ["error": "key_missing", "error_description": "no key with this keyid"]
                )
            }
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
