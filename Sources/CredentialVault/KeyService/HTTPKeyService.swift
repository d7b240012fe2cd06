import Foundation
import VaultCrypto

/// The TIM KeyService v1 wire protocol over HTTP, good against a real TIM deployment and KeyServiceMock.
///
/// Every call is a POST of a flat JSON object to `{realmBase}/keyservice/v1/{createkey|key}`. A call is
/// retried once, and only when no HTTP answer came back at all; any answer, even a 500, is final.
public struct HTTPKeyService: KeyService {
    /// The base the call paths are appended to, ending in `/keyservice/v1/`.
    public let baseURL: URL
    private let transport: any HTTPTransport
    private let timeout: TimeInterval

    /// A client for `{server}/auth/realms/{realm}/keyservice/v1/`, the layout of TIM deployments.
    /// - Throws: ``KeyServiceError/insecureURL(host:)`` unless the server is https or a loopback host.
    public init(
        server: URL,
        realm: String,
        transport: any HTTPTransport = URLSessionTransport(),
        timeout: TimeInterval = 15
    ) throws(KeyServiceError) {
        let base = server.appending(path: "auth/realms").appending(path: realm).appending(path: "keyservice/v1/")
        try self.init(baseURL: base, transport: transport, timeout: timeout)
    }

    /// A client for a key service whose v1 base URL is known (ending in `/keyservice/v1`).
    /// - Throws: ``KeyServiceError/insecureURL(host:)`` unless the URL is https or a loopback host.
    public init(
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        timeout: TimeInterval = 15
    ) throws(KeyServiceError) {
        guard baseURL.isSecureOrLoopback else { throw .insecureURL(host: baseURL.host ?? baseURL.absoluteString) }
        self.baseURL = baseURL.absoluteString.hasSuffix("/") ? baseURL : baseURL.appending(path: "")
        self.transport = transport
        self.timeout = timeout
    }

    public func createKey(secret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey {
        let key = try await call("createkey", fields: ["secret": secret])
        guard key.longSecret != nil else { throw .responseHasNoLongSecret }
        return key
    }

    public func getKey(keyId: String, secret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey {
        try await call("key", fields: ["keyid": SecureBytes(Data(keyId.utf8)), "secret": secret])
    }

    public func getKey(keyId: String, longSecret: SecureBytes) async throws(KeyServiceError) -> KeyServiceKey {
        try await call("key", fields: ["keyid": SecureBytes(Data(keyId.utf8)), "longsecret": longSecret])
    }

    private struct Answer: Decodable {
        let keyid: String
        let key: String
        let longsecret: String?
    }

    private func call(_ path: String, fields: [String: SecureBytes]) async throws(KeyServiceError) -> KeyServiceKey {
        let request = HTTPRequest(
            method: "POST",
            url: baseURL.appending(path: path),
            headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: Self.jsonBody(fields),
            timeout: timeout
        )
        let response = try await sendRetryingOnce(request)
        switch response.status {
        case 200: return try Self.decode(response.body)
        case 401: throw .badPassword
        case 204, 403: throw .keyLocked
        case 404: throw .keyMissing
        case 500: throw .unableToCreateKey
        default: throw .unknown(status: response.status)
        }
    }

    private func sendRetryingOnce(_ request: HTTPRequest) async throws(KeyServiceError) -> HTTPResponse {
        var lastError: TransportError?
        for _ in 0..<2 {
            do {
                return try await transport.send(request)
            } catch {
                // A timeout may have reached the server and counted an attempt: only "no answer at all" is retried.
                if error.kind == .timedOut { throw .potentiallyNoInternet(host: error.host) }
                lastError = error
            }
        }
        throw .badInternet(host: lastError?.host ?? "", reason: lastError?.reason ?? "no answer")
    }

    /// A flat JSON object of strings. Secrets go straight from their buffers into the body.
    private static func jsonBody(_ fields: [String: SecureBytes]) -> Data {
        var body = Data("{".utf8)
        for (index, (name, value)) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { body.append(contentsOf: ",".utf8) }
            body.append(contentsOf: "\"\(name)\":".utf8)
            body.append(jsonString(value.copyToData()))
        }
        body.append(contentsOf: "}".utf8)
        return body
    }

    private static func jsonString(_ utf8: Data) -> Data {
        var out = Data("\"".utf8)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0..<0x20: out.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(contentsOf: "\"".utf8)
        return out
    }

    private static func decode(_ body: Data) throws(KeyServiceError) -> KeyServiceKey {
        guard let answer = try? JSONDecoder().decode(Answer.self, from: body), !answer.keyid.isEmpty else {
            throw .unableToDecode
        }
        guard let key = try? SecureBytes(base64Encoded: answer.key), (16...64).contains(key.count) else {
            throw .unableToDecode
        }
        let longSecret = answer.longsecret.flatMap { $0.isEmpty ? nil : SecureBytes(Data($0.utf8)) }
        return KeyServiceKey(keyId: answer.keyid, key: key, longSecret: longSecret)
    }
}
