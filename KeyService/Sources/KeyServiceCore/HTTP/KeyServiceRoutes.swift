import Foundation
package import Hummingbird
import Logging
import NIOCore
import VaultCrypto

/// The TIM KeyService v1 endpoints: `createkey` and `key`, answering exactly as the reference says.
///
/// Beyond the reference, where a real deployment's behaviour is not public: `key` answers 503 when it
/// cannot count an attempt (and then does not check it), `createkey` 429 when the client holds its most
/// keys and 507 when the service does. Each decision is logged at `.debug` with the key id, never with a
/// secret, long secret or key; a failure to count at `.error`, once.
package struct KeyServiceRoutes: Sendable {
    let service: KeyService
    /// The lower-case name of the header a proxy on this machine names the client in.
    let forwardedClientHeader: String?

    /// The routes of `service`. With `forwardedClientHeader` (such as `X-Real-IP` or `X-Forwarded-For`), a request
    /// that comes from a loopback address (a proxy on this machine) counts against the per-client key limit of the
    /// address in that header (the last one of a list), not the proxy's.
    package init(service: KeyService, forwardedClientHeader: String? = nil) {
        self.service = service
        self.forwardedClientHeader = forwardedClientHeader?.lowercased()
    }

    /// Adds `createkey` and `key` below `basePath` (`/auth/realms/{realm}/keyservice/v1` in a TIM deployment).
    package func add<Context: RemoteAddressRequestContext>(to router: Router<Context>, basePath: String) {
        let metrics = service.metrics
        router.post(RouterPath(basePath + "/createkey")) { request, context in
            do {
                let response = try await createKey(request, context: context)
                metrics.request(route: "createkey", outcome: "created")
                return response
            } catch let refusal as RequestRefusal {
                metrics.request(route: "createkey", outcome: Self.outcome(of: refusal))
                throw refusal
            }
        }
        router.post(RouterPath(basePath + "/key")) { request, context in
            do {
                let (response, outcome) = try await key(request, context: context)
                metrics.request(route: "key", outcome: outcome)
                return response
            } catch let refusal as RequestRefusal {
                metrics.request(route: "key", outcome: Self.outcome(of: refusal))
                throw refusal
            }
        }
    }

    /// A refusal's outcome label: its `error` code.
    static func outcome(of refusal: RequestRefusal) -> String {
        refusal.error
    }

    private func createKey(_ request: Request, context: some RemoteAddressRequestContext) async throws -> Response {
        var request = request
        let body = try await decode(&request)
        guard let secret = body.secret else {
            throw RequestRefusal.invalidRequest("the field secret is missing")
        }
        let client = client(of: request, remoteAddress: context.remoteAddress)
        let grant: KeyGrant
        do {
            grant = try await service.createKey(secret: secret, client: client)
        } catch {
            throw Self.creationRefusal(error, client: client, logger: context.logger)
        }
        context.logger.debug("key created", metadata: ["keyid": "\(grant.keyId)"])
        return KeyResponse(grant).response
    }

    /// How a `createkey` that stored nothing is answered (both protocols): 429 and 507 for the limits, 500 for
    /// anything else (logged at `.error`).
    static func creationRefusal(_ error: any Error, client: ClientAddress, logger: Logger) -> RequestRefusal {
        switch error {
        case KeyService.CreationRefusal.clientLimit(let limit):
            logger.debug("key refused: client limit", metadata: ["client": "\(client)"])
            return RequestRefusal(
                status: .tooManyRequests,
                error: "too_many_keys",
                description: "this client has created \(limit) keys, the most it may hold"
            )
        case KeyService.CreationRefusal.totalLimit(let limit):
            logger.debug("key refused: store full", metadata: ["client": "\(client)"])
            return RequestRefusal(
                status: .init(code: 507, reasonPhrase: "Insufficient Storage"),
                error: "key_store_full",
                description: "the key service holds \(limit) keys, the most it may hold"
            )
        default:
            logger.error("unable to create key", metadata: ["error": "\(error)"])
            return RequestRefusal(
                status: .internalServerError,
                error: "unable_to_create_key",
                description: "the key could not be stored"
            )
        }
    }

    /// The client a request counts against: the peer, or the address a proxy on this machine forwarded.
    func client(of request: Request, remoteAddress: SocketAddress?) -> ClientAddress {
        let peer = ClientAddress(remoteAddress)
        guard let forwardedClientHeader, ClientAddress.isLoopback(remoteAddress),
            let value = request.headers.last(where: { $0.name.canonicalName == forwardedClientHeader })?.value,
            let last = value.split(separator: ",").last,
            let forwarded = ClientAddress(ipAddress: String(last).trimmingCharacters(in: .whitespaces))
        else { return peer }
        return forwarded
    }

    private func key(
        _ request: Request,
        context: some RemoteAddressRequestContext
    ) async throws -> (Response, outcome: String) {
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
        let logger = context.logger
        // The attempt's fields on every line, given with each call: only a line at an enabled level builds them.
        let fieldName = credential.fieldName
        func attempt(_ more: Logger.Metadata = [:]) -> Logger.Metadata {
            more.merging(["keyid": "\(keyId)", "credential": "\(fieldName)"]) { mine, _ in mine }
        }
        let answer: KeyService.Answer
        do {
            answer = try await service.key(keyId: keyId, credential: credential)
        } catch let error as KeyService.AttemptNotCounted {
            // Failing closed: a guess that cannot be counted is never checked, the right secret included.
            logger.error(
                "attempt refused unchecked: its count cannot be written",
                metadata: attempt(["error": "\(error)"])
            )
            throw RequestRefusal(
                status: .serviceUnavailable,
                error: "temporarily_unavailable",
                description: "the attempt cannot be counted, so it is not checked; try again later"
            )
        } catch let error as KeyService.UnknownPepperVersion {
            logger.error("attempt counted but not checked", metadata: attempt(["error": "\(error)"]))
            throw RequestRefusal.serverError
        }
        switch answer {
        case .granted(let grant, let resetFailure, let rewrapFailure):
            if let resetFailure {
                logger.error(
                    "key granted, but its count cannot be reset",
                    metadata: attempt(["error": "\(resetFailure)"])
                )
            } else {
                logger.debug("key granted", metadata: attempt())
            }
            if let rewrapFailure {
                logger.warning(
                    "key granted, but it could not move to the newest pepper",
                    metadata: attempt(["error": "\(rewrapFailure)"])
                )
            }
            return (KeyResponse(grant).response, "granted")
        case .wrongSecret(let failures):
            let lock = failures >= KeyService.attemptsBeforeLock ? ": key now locked" : ""
            logger.debug("wrong secret, \(failures) of \(KeyService.attemptsBeforeLock)\(lock)", metadata: attempt())
            return (
                Response.json(
                    status: .unauthorized,
                    ["error": "bad_password", "error_description": "wrong secret"]
                ), "wrong_credential"
            )
        case .locked:
            logger.debug("key locked", metadata: attempt())
            // TIM deployments answer a locked key with 204 and no body.
            return (Response(status: .noContent), "locked")
        case .missing:
            logger.debug("unknown keyid", metadata: attempt())
            return (
                Response.json(
                    status: .notFound,
                    ["error": "key_missing", "error_description": "no key with this keyid"]
                ), "missing"
            )
        case .protocolMismatch:
            logger.debug("protocol 2 key: secret refused, not counted", metadata: attempt())
            return (
                Response.json(
                    status: .conflict,
                    [
                        "error": "protocol_v2_key",
                        "error_description": "this key is a protocol 2 key: it takes no secret (use keyservice/v2)",
                    ]
                ), "protocol_v2_key"
            )
        }
    }

    private func decode(_ request: inout Request) async throws -> KeyServiceRequest {
        let body = try await request.collectLimitedBody()
        let decoded: KeyServiceRequest
        if let fields = FlatJSON.plainStrings(in: body) {
            decoded = KeyServiceRequest(
                keyid: fields["keyid"],
                secret: fields["secret"],
                longsecret: fields["longsecret"]
            )
        } else {
            do {
                decoded = try JSONDecoder().decode(KeyServiceRequest.self, from: body)
            } catch {
                throw RequestRefusal.invalidRequest("the body is not a JSON object of string fields")
            }
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

/// The 200 body of `createkey` and `key`, `{"key","keyid","longsecret"}` (keys sorted, as the JSON coders wrote it).
struct KeyResponse {
    let keyid: String
    let key: String
    let longsecret: String

    init(_ grant: KeyGrant) {
        keyid = grant.keyId
        key = Base64.encode(Data(grant.key))
        longsecret = grant.longSecret
    }

    var response: Response {
        Response.json(body: FlatJSON.object(["key": key, "keyid": keyid, "longsecret": longsecret]))
    }
}
