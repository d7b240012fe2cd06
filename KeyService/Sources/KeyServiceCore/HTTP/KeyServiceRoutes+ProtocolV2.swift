import Foundation
package import Hummingbird
import Logging
import NIOCore
import VaultCrypto

/// Protocol 2's endpoints (issue 27): `createkey`, `enroll`, `evaluate`, `confirm` and `key`, beside protocol 1's.
///
/// Binary fields are base64url without padding; `key` is standard base64 and `longsecret` the same text as in
/// protocol 1. A locked key answers 403 (never 204). Each decision is logged at `.debug` with the key id only: never
/// a blinded or evaluated element, a nonce, a proof, an auth key, a long secret or a key.
extension KeyServiceRoutes {
    /// The protocol 2 base beside a protocol 1 base: `…/keyservice/v1` becomes `…/keyservice/v2`. Nil for a base
    /// whose last component is not `v1`: the client names protocol 2's base only beside one that is
    /// (CredentialVault's `TIMLayout`), so no client could reach it.
    package static func protocolV2BasePath(besideV1 basePath: String) -> String? {
        basePath.hasSuffix("/v1") ? String(basePath.dropLast(3)) + "/v2" : nil
    }

    /// Adds protocol 2's calls below `basePath` (`/auth/realms/{realm}/keyservice/v2` beside a TIM deployment's v1).
    package func addProtocolV2<Context: RemoteAddressRequestContext>(to router: Router<Context>, basePath: String) {
        route("createkey", on: router, basePath: basePath) { request, context in
            try await createKeyV2(request, context: context)
        }
        route("enroll", on: router, basePath: basePath) { request, context in
            try await enroll(request, context: context)
        }
        route("evaluate", on: router, basePath: basePath) { request, context in
            try await evaluate(request, context: context)
        }
        route("confirm", on: router, basePath: basePath) { request, context in
            try await confirm(request, context: context)
        }
        route("key", on: router, basePath: basePath) { request, context in
            try await keyV2(request, context: context)
        }
    }

    /// One POST route whose answers and refusals are counted under `v2/{name}`.
    private func route<Context: RemoteAddressRequestContext>(
        _ name: String,
        on router: Router<Context>,
        basePath: String,
        _ handle: @escaping @Sendable (Request, Context) async throws -> (Response, outcome: String)
    ) {
        let metrics = service.metrics
        let label = "v2/" + name
        router.post(RouterPath(basePath + "/" + name)) { request, context in
            do {
                let (response, outcome) = try await handle(request, context)
                metrics.request(route: label, outcome: outcome)
                return response
            } catch let refusal as RequestRefusal {
                metrics.request(route: label, outcome: Self.outcome(of: refusal))
                throw refusal
            }
        }
    }

    private func createKeyV2(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
        var request = request
        let body = try await decodeV2(&request)
        let blinded = try Self.element(body.blinded)
        let client = client(of: request, remoteAddress: context.remoteAddress)
        let created: (grant: KeyGrant, evaluated: Data)
        do {
            created = try await service.createKeyV2(blinded: blinded, client: client)
        } catch is InvalidElement {
            throw Self.invalidElement
        } catch {
            throw Self.creationRefusal(error, client: client, logger: context.logger)
        }
        context.logger.debug("key created", metadata: ["keyid": "\(created.grant.keyId)", "protocol": "2"])
        let response = KeyResponse(created.grant)
        let answer = FlatJSON.object([
            "evaluated": Base64URL.encode(created.evaluated), "key": response.key, "keyid": response.keyid,
            "longsecret": response.longsecret,
        ])
        return (Response.json(body: answer), "created")
    }

    private func enroll(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
        var request = request
        let body = try await decodeV2(&request)
        let keyId = try Self.required(body.keyid, "keyid")
        let longSecret = try Self.required(body.longsecret, "longsecret")
        var authKey = try Self.binary(body.authkey, "authkey")
        defer { VerifierDerivation.zero(&authKey) }
        guard authKey.count == ProtocolV2Derivation.valueLength else {
            throw RequestRefusal.invalidRequest("authkey is not \(ProtocolV2Derivation.valueLength) bytes")
        }
        let logger = context.logger
        let enrollment: KeyEnrollment
        do {
            enrollment = try await service.enroll(keyId: keyId, longSecret: longSecret, authKey: authKey)
        } catch {
            logger.error("enroll failed: storage", metadata: ["keyid": "\(keyId)", "error": "\(error)"])
            throw Self.temporarilyUnavailable("the key could not be read or written; try again later")
        }
        switch enrollment {
        case .enrolled:
            logger.debug("key enrolled", metadata: ["keyid": "\(keyId)"])
            return (Response.json(body: FlatJSON.object(["keyid": keyId])), "enrolled")
        case .refused(.wrongLongSecret):
            logger.debug("enroll refused: wrong long secret", metadata: ["keyid": "\(keyId)"])
            return Self.answer(.unauthorized, "bad_longsecret", "wrong long secret")
        case .refused(.alreadyEnrolled):
            logger.debug("enroll refused: already enrolled", metadata: ["keyid": "\(keyId)"])
            return Self.answer(.conflict, "already_enrolled", "this key has its auth key already")
        case .refused(.notProtocol2):
            logger.debug("enroll refused: protocol 1 key", metadata: ["keyid": "\(keyId)"])
            return Self.notProtocolV2
        case .missing:
            logger.debug("unknown keyid", metadata: ["keyid": "\(keyId)"])
            return Self.keyMissing
        }
    }

    private func evaluate(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
        var request = request
        let body = try await decodeV2(&request)
        let keyId = try Self.required(body.keyid, "keyid")
        let blinded = try Self.element(body.blinded)
        let logger = context.logger
        let answer: EvaluationAnswer
        do {
            answer = try await service.evaluate(keyId: keyId, blinded: blinded)
        } catch is InvalidElement {
            throw Self.invalidElement
        } catch let error as KeyService.AttemptNotCounted {
            // Failing closed, as protocol 1: an evaluation that cannot be counted is never made.
            logger.error(
                "evaluation refused: its count cannot be written",
                metadata: ["keyid": "\(keyId)", "error": "\(error)"]
            )
            throw Self.temporarilyUnavailable("the attempt cannot be counted, so it is not evaluated; try again later")
        }
        switch answer {
        case .evaluated(let evaluated, let nonce, let failures):
            let lock = failures >= KeyService.attemptsBeforeLock ? ": key now locked" : ""
            logger.debug(
                "evaluated, \(failures) of \(KeyService.attemptsBeforeLock) unconfirmed\(lock)",
                metadata: ["keyid": "\(keyId)"]
            )
            let answer = FlatJSON.object([
                "evaluated": Base64URL.encode(evaluated), "keyid": keyId, "nonce": Base64URL.encode(Data(nonce)),
            ])
            return (Response.json(body: answer), "evaluated")
        case .locked:
            logger.debug("key locked", metadata: ["keyid": "\(keyId)"])
            return Self.keyLocked
        case .missing:
            logger.debug("unknown keyid", metadata: ["keyid": "\(keyId)"])
            return Self.keyMissing
        case .notProtocol2:
            logger.debug("evaluation refused: protocol 1 key", metadata: ["keyid": "\(keyId)"])
            return Self.notProtocolV2
        case .notEnrolled:
            logger.debug("evaluation refused: not enrolled", metadata: ["keyid": "\(keyId)"])
            return Self.answer(.conflict, "not_enrolled", "this key has no auth key yet: enroll it first")
        }
    }

    private func confirm(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
        var request = request
        let body = try await decodeV2(&request)
        let keyId = try Self.required(body.keyid, "keyid")
        let nonce = try Self.binary(body.nonce, "nonce")
        let proof = try Self.binary(body.proof, "proof")
        let logger = context.logger
        let answer: ConfirmationAnswer
        do {
            answer = try await service.confirm(keyId: keyId, nonce: nonce, proof: proof)
        } catch {
            logger.error("confirm failed: storage", metadata: ["keyid": "\(keyId)", "error": "\(error)"])
            throw Self.temporarilyUnavailable("the proof could not be checked; try again later")
        }
        switch answer {
        case .granted(let grant, let reset, let resealFailure):
            logger.debug(
                reset ? "confirmed: count reset" : "confirmed: previous nonce",
                metadata: ["keyid": "\(keyId)"]
            )
            if let resealFailure {
                logger.warning(
                    "key granted, but it could not move to the newest pepper",
                    metadata: ["keyid": "\(keyId)", "error": "\(resealFailure)"]
                )
            }
            return (KeyResponse(grant).response, "granted")
        case .wrongProof:
            logger.debug("confirm refused: wrong proof or stale nonce", metadata: ["keyid": "\(keyId)"])
            return Self.answer(.unauthorized, "bad_proof", "wrong proof, or a stale nonce")
        case .notProtocol2:
            logger.debug("confirm refused: protocol 1 key", metadata: ["keyid": "\(keyId)"])
            return Self.notProtocolV2
        case .missing:
            logger.debug("unknown keyid", metadata: ["keyid": "\(keyId)"])
            return Self.keyMissing
        }
    }

    /// Protocol 1's device-secret path on a protocol 2 key: counted, 401/403/404; a secret is refused.
    private func keyV2(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
        var request = request
        let body = try await decodeV2(&request)
        let keyId = try Self.required(body.keyid, "keyid")
        guard body.secret == nil else {
            throw RequestRefusal.invalidRequest("protocol 2 takes no secret: send longsecret")
        }
        let longSecret = try Self.required(body.longsecret, "longsecret")
        let logger = context.logger
        let answer: KeyService.Answer
        do {
            answer = try await service.key(keyId: keyId, credential: .longSecret(longSecret), overProtocol: 2)
        } catch let error as KeyService.AttemptNotCounted {
            logger.error(
                "attempt refused unchecked: its count cannot be written",
                metadata: ["keyid": "\(keyId)", "error": "\(error)"]
            )
            throw Self.temporarilyUnavailable("the attempt cannot be counted, so it is not checked; try again later")
        } catch let error as KeyService.UnknownPepperVersion {
            logger.error("attempt counted but not checked", metadata: ["keyid": "\(keyId)", "error": "\(error)"])
            throw RequestRefusal.serverError
        }
        switch answer {
        case .granted(let grant, let resetFailure, _):
            if let resetFailure {
                logger.error(
                    "key granted, but its count cannot be reset",
                    metadata: ["keyid": "\(keyId)", "error": "\(resetFailure)"]
                )
            } else {
                logger.debug("key granted", metadata: ["keyid": "\(keyId)", "credential": "longsecret"])
            }
            return (KeyResponse(grant).response, "granted")
        case .wrongSecret(let failures):
            let lock = failures >= KeyService.attemptsBeforeLock ? ": key now locked" : ""
            logger.debug(
                "wrong long secret, \(failures) of \(KeyService.attemptsBeforeLock)\(lock)",
                metadata: ["keyid": "\(keyId)"]
            )
            let (response, _) = Self.answer(.unauthorized, "bad_password", "wrong long secret")
            return (response, "wrong_credential")
        case .locked:
            logger.debug("key locked", metadata: ["keyid": "\(keyId)"])
            return Self.keyLocked
        case .missing:
            logger.debug("unknown keyid", metadata: ["keyid": "\(keyId)"])
            return Self.keyMissing
        case .protocolMismatch:
            logger.debug("protocol 1 key: refused, not counted", metadata: ["keyid": "\(keyId)"])
            return Self.notProtocolV2
        }
    }

    // MARK: Answers

    /// A JSON error answer `{"error","error_description"}`, its outcome label the error code.
    private static func answer(
        _ status: HTTPResponse.Status,
        _ error: String,
        _ description: String
    ) -> (Response, outcome: String) {
        (Response.json(status: status, ["error": error, "error_description": description]), error)
    }

    private static var keyMissing: (Response, outcome: String) {
        let (response, _) = answer(.notFound, "key_missing", "no key with this keyid")
        return (response, "missing")
    }

    private static var keyLocked: (Response, outcome: String) {
        let (response, _) = answer(.forbidden, "key_locked", "this key is locked")
        return (response, "locked")
    }

    private static var notProtocolV2: (Response, outcome: String) {
        let (response, _) = answer(.conflict, "not_protocol_v2", "this key is a protocol 1 key (use keyservice/v1)")
        return (response, "not_protocol_v2")
    }

    private static let invalidElement = RequestRefusal(
        status: .badRequest,
        error: "invalid_element",
        description: InvalidElement().description
    )

    private static func temporarilyUnavailable(_ description: String) -> RequestRefusal {
        RequestRefusal(status: .serviceUnavailable, error: "temporarily_unavailable", description: description)
    }

    // MARK: Fields

    private static func required(_ value: String?, _ name: String) throws -> String {
        guard let value else { throw RequestRefusal.invalidRequest("the field \(name) is missing") }
        return value
    }

    /// A base64url field (no padding), decoded.
    private static func binary(_ value: String?, _ name: String) throws -> [UInt8] {
        let text = try required(value, name)
        guard let decoded = try? Base64URL.decode(text) else {
            throw RequestRefusal.invalidRequest("the field \(name) is not base64url without padding")
        }
        return [UInt8](decoded)
    }

    /// `blinded`, decoded; its validity as an element is the service's to check (before it counts anything).
    private static func element(_ value: String?) throws -> Data {
        Data(try binary(value, "blinded"))
    }

    private func decodeV2(_ request: inout Request) async throws -> KeyServiceV2Request {
        let body = try await request.collectLimitedBody()
        let decoded: KeyServiceV2Request
        if let fields = FlatJSON.plainStrings(in: body) {
            decoded = KeyServiceV2Request(fields: fields)
        } else {
            do {
                decoded = try JSONDecoder().decode(KeyServiceV2Request.self, from: body)
            } catch {
                throw RequestRefusal.invalidRequest("the body is not a JSON object of string fields")
            }
        }
        for value in decoded.values where value?.isEmpty == true {
            throw RequestRefusal.invalidRequest("a field is an empty string")
        }
        return decoded
    }
}
