import Foundation
import Hummingbird
import Logging
import VaultCrypto

/// The TIM KeyService v1 endpoints: `createkey` and `key`, answering exactly as the reference says.
///
/// Beyond the reference, where a real deployment's behaviour is not public: `key` answers 503 when it
/// cannot count an attempt (and then does not check it), `createkey` 429 when the client holds its most
/// keys and 507 when the service does. Each decision is logged at `.debug` with the key id, never with a
/// secret, long secret or key; a failure to count at `.error`, once.
struct KeyServiceRoutes: Sendable {
    let store: KeyStore

    func add(to router: Router<MockRequestContext>, layout: Layout) {
        router.post(RouterPath(layout.path(Layout.createKey))) { request, context in
            var request = request
            let body = try await decode(&request)
            guard let secret = body.secret else {
                throw RequestRefusal.invalidRequest("the field secret is missing")
            }
            let client = ClientAddress(context.channel.remoteAddress)
            let grant: KeyGrant
            do {
                grant = try store.createKey(secret: secret, client: client)
            } catch KeyStore.CreationRefusal.clientLimit(let limit) {
                context.logger.debug("key refused: client limit", metadata: ["client": "\(client)"])
                throw RequestRefusal(
                    status: .tooManyRequests,
                    error: "too_many_keys",
                    description: "this client has created \(limit) keys, the most it may hold"
                )
            } catch KeyStore.CreationRefusal.totalLimit(let limit) {
                context.logger.debug("key refused: store full", metadata: ["client": "\(client)"])
                throw RequestRefusal(
                    status: .init(code: 507, reasonPhrase: "Insufficient Storage"),
                    error: "key_store_full",
                    description: "the key service holds \(limit) keys, the most it may hold"
                )
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
            let answer: KeyStore.Answer
            do {
                answer = try store.key(keyId: keyId, credential: credential)
            } catch let error as KeyStore.AttemptNotCounted {
                // Failing closed: a guess that cannot be counted is never checked, the right secret included.
                logger.error(
                    "attempt refused unchecked: its count cannot be written",
                    metadata: ["error": "\(error)"]
                )
                throw RequestRefusal(
                    status: .serviceUnavailable,
                    error: "temporarily_unavailable",
                    description: "the attempt cannot be counted, so it is not checked; try again later"
                )
            }
            switch answer {
            case .granted(let grant, let resetFailure):
                if let resetFailure {
                    logger.error("key granted, but its count cannot be reset", metadata: ["error": "\(resetFailure)"])
                } else {
                    logger.debug("key granted")
                }
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
