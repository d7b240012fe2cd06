public import Foundation
public import Logging
public import VaultCrypto

/// The TIM KeyService v1 wire protocol over HTTP, good against a real TIM deployment and KeyServiceMock, and
/// protocol v2 (OPRF) against `keyservice` and `keyservice-mock`.
///
/// Every call is a POST of a flat JSON object to `{realmBase}/keyservice/v1/{createkey|key}`, or
/// `{realmBase}/keyservice/v2/{createkey|enroll|evaluate|confirm}` (the v1 base's sibling). A call is
/// retried once, and only when no connection could be made (the request never left); a dropped connection,
/// a timeout and any answer, even a 500, are final, so one typo is never counted twice.
public struct HTTPKeyService: KeyService {
    /// The base the call paths are appended to, ending in `/keyservice/v1/`.
    public let baseURL: URL
    /// Each call's URL (v2 calls below ``TIMLayout/version2(of:)``, none when the base has no v2), resolved once: a
    /// login would otherwise build its `key` URL right after Argon2id, about 20 µs with every cache cold (issue 23).
    private let urls: [KeyServiceCall: URL]
    private let transport: any HTTPTransport
    private let timeout: TimeInterval
    private let logger: Logger

    /// A client for `{server}/auth/realms/{realm}/keyservice/v1/`, the layout of TIM deployments.
    /// - Throws: ``VaultError`` `.insecureURL` unless the server is https or a loopback address.
    public init(
        server: URL,
        realm: String,
        transport: any HTTPTransport = DefaultHTTPTransport.make(),
        timeout: TimeInterval = VaultConfiguration.defaultRequestTimeout,
        logger: Logger = Logger(label: "credential-vault")
    ) throws(VaultError) {
        let base = TIMLayout.keyServiceURL(issuer: TIMLayout.issuer(server: server, realm: realm))
        try self.init(baseURL: base, transport: transport, timeout: timeout, logger: logger)
    }

    /// A client for a key service whose v1 base URL is known (ending in `/keyservice/v1`).
    /// - Throws: ``VaultError`` `.insecureURL` unless the URL is https or a loopback address.
    public init(
        baseURL: URL,
        transport: any HTTPTransport = DefaultHTTPTransport.make(),
        timeout: TimeInterval = VaultConfiguration.defaultRequestTimeout,
        logger: Logger = Logger(label: "credential-vault")
    ) throws(VaultError) {
        guard baseURL.isSecureOrLoopback else {
            throw .insecureURL(baseURL, role: "the key service", origin: .keyService)
        }
        self.baseURL = baseURL.absoluteString.hasSuffix("/") ? baseURL : baseURL.appending(path: "")
        let version2 = TIMLayout.version2(of: self.baseURL)
        var urls: [KeyServiceCall: URL] = [:]
        for call in KeyServiceCall.allCases {
            urls[call] = (call.isVersion2 ? version2 : self.baseURL)?.appending(path: call.path)
        }
        self.urls = urls
        self.transport = transport
        self.timeout = timeout
        self.logger = logger
    }

    /// POSTs v1 `createkey`; an answer without a long secret is refused (`.noLongSecret`).
    public func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        let key = try await call(.createKey, KeyServiceRequestBody(secret: secret.utf8String()))
        guard key.longSecret != nil else { throw .noLongSecret(host: host) }
        return key
    }

    /// POSTs v1 `key` with the secret; sent once, so one wrong secret is counted once.
    public func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        try await call(.keyByPassword, KeyServiceRequestBody(keyid: keyId, secret: secret.utf8String()))
    }

    /// POSTs v1 `key` with the long secret; sent once, so one wrong secret is counted once.
    public func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        try await call(.keyByDeviceSecret, KeyServiceRequestBody(keyid: keyId, longsecret: longSecret.utf8String()))
    }

    /// POSTs v2 `createkey`; an answer without a long secret or a 32-byte `evaluated` is refused.
    public func createKey(blindedElement: Data) async throws(VaultError) -> KeyServiceCreation {
        let body = try await send(.createKeyV2, KeyServiceRequestBody(blinded: Base64URL.encode(blindedElement)))
        let answer = try members(body, during: .createKeyV2)
        let key = try self.key(answer, during: .createKeyV2)
        guard key.longSecret != nil else { throw .noLongSecret(host: host) }
        guard let evaluated = answer["evaluated"]?.stringValue.flatMap(Self.element) else {
            throw .keyServiceAnswerNotAKey(host: host, during: .createKeyV2)
        }
        return KeyServiceCreation(key: key, evaluatedElement: evaluated)
    }

    /// POSTs v2 `enroll`; a 200 is the answer, its body unread.
    public func enroll(keyId: String, longSecret: SecureBytes, authKey: SecureBytes) async throws(VaultError) {
        _ = try await send(
            .enroll,
            KeyServiceRequestBody(
                keyid: keyId,
                longsecret: longSecret.utf8String(),
                authkey: authKey.base64URLEncodedString()
            )
        )
    }

    /// POSTs v2 `evaluate`; an answer for another key, without a 32-byte `evaluated` or with a nonce outside 16 to
    /// 64 bytes is refused.
    public func evaluate(keyId: String, blindedElement: Data) async throws(VaultError) -> KeyServiceEvaluation {
        let body = try await send(
            .evaluate,
            KeyServiceRequestBody(keyid: keyId, blinded: Base64URL.encode(blindedElement))
        )
        let answer = try members(body, during: .evaluate)
        guard answer["keyid"]?.stringValue == keyId,
            let evaluated = answer["evaluated"]?.stringValue.flatMap(Self.element),
            let nonce = answer["nonce"]?.stringValue.flatMap({ try? Base64URL.decode($0) }),
            (16...64).contains(nonce.count)
        else { throw .keyServiceAnswerNotAKey(host: host, during: .evaluate) }
        return KeyServiceEvaluation(evaluatedElement: evaluated, nonce: nonce)
    }

    /// POSTs v2 `confirm`; the answer is the key, as for `key`.
    public func confirm(keyId: String, nonce: Data, proof: Data) async throws(VaultError) -> KeyServiceKey {
        try await call(
            .confirm,
            KeyServiceRequestBody(keyid: keyId, nonce: Base64URL.encode(nonce), proof: Base64URL.encode(proof))
        )
    }

    /// A 32-byte element in base64url; whether it is a valid one is the OPRF's check.
    private static func element(_ text: String) -> Data? {
        guard let element = try? Base64URL.decode(text), element.count == 32 else { return nil }
        return element
    }

    private var host: String { baseURL.displayHost }

    private func call(_ call: KeyServiceCall, _ body: KeyServiceRequestBody) async throws(VaultError) -> KeyServiceKey {
        try key(try members(try await send(call, body), during: call), during: call)
    }

    /// Sends `body` to `call`'s path and answers the body of a 200.
    private func send(_ call: KeyServiceCall, _ body: KeyServiceRequestBody) async throws(VaultError) -> Data {
        // No v2 URL: the base does not end in v1 (``TIMLayout/version2(of:)``).
        guard let url = urls[call] else { throw .keyServiceVersionUnsupported(.v2, host: host) }
        let request = HTTPRequest(
            method: "POST",
            url: url,
            // Connections are reused: the transport never sends a request again on its own (a password check sent
            // twice would count one typo twice); only sendRetryingOnce does, and only when it never left.
            headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: body.json,
            timeout: timeout
        )
        let response = try await sendRetryingOnce(request)
        guard response.status == 200 else { throw .keyService(status: response.status, during: call, host: host) }
        return response.body
    }

    private func sendRetryingOnce(_ request: HTTPRequest) async throws(VaultError) -> HTTPResponse {
        var lastError: TransportError?
        for _ in 0..<2 {
            do {
                return try await transport.send(request, logger: logger)
            } catch {
                // Only a request that never left is sent again: one that timed out or lost its connection may
                // have reached the key service and counted a wrong password, and must not count it twice.
                guard error.kind == .notConnected else {
                    throw .network(error, service: "the key service", origin: .keyService)
                }
                lastError = error
            }
        }
        let error = lastError ?? TransportError(kind: .noResponse, host: host, reason: "no answer")
        throw .network(error, service: "the key service", origin: .keyService)
    }

    /// The answer's members, read once (``UntrustedJSON/members(from:maximumSize:)``).
    private func members(_ body: Data, during call: KeyServiceCall) throws(VaultError) -> [String: JSONValue] {
        guard let answer = try? UntrustedJSON.members(from: body) else {
            throw .keyServiceAnswerNotAKey(host: host, during: call)
        }
        return answer
    }

    /// The key an answer's members hold: `keyid` and `key` strings, `longsecret` a string when present (an empty one
    /// is none).
    private func key(_ answer: [String: JSONValue], during call: KeyServiceCall) throws(VaultError) -> KeyServiceKey {
        guard let keyId = answer["keyid"]?.stringValue, !keyId.isEmpty,
            let key = answer["key"]?.stringValue.flatMap({ try? SecureBytes(base64Encoded: $0) }),
            (16...64).contains(key.count),
            let longSecret = UntrustedJSON.optionalString("longsecret", in: answer)
        else {
            throw .keyServiceAnswerNotAKey(host: host, during: call)
        }
        return KeyServiceKey(
            keyId: keyId,
            key: key,
            longSecret: longSecret.flatMap { $0.isEmpty ? nil : SecureBytes(Data($0.utf8)) }
        )
    }
}
