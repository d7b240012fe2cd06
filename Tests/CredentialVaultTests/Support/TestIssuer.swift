import CredentialVault
import Foundation
import Hummingbird
import JWTKit
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A small OpenID Connect issuer on 127.0.0.1 whose token endpoint answers with whatever id_token a test
/// makes: the test token endpoint for hostile id_tokens. Discovery, an authorization endpoint that approves
/// at once (redirecting with a code, the state and nothing else), a JWK Set a test can change, and a token
/// endpoint that answers an opaque access token, a refresh token and the test's id_token. Counts the JWK
/// Set fetches.
final class TestIssuer: Sendable {
    /// Makes the id_token for one login; gets the nonce the authorization request carried.
    typealias IDTokenMaker = @Sendable (_ nonce: String, _ issuer: TestIssuer) async throws -> String

    let issuer: URL
    let clientId = "test-client"
    /// The key the issuer signs with (ES256), listed in the JWK Set under ``keyId``.
    let signingKey = ES256PrivateKey()
    let keyId = "key-1"
    private let state: Mutex<State>

    private struct State {
        var keys: [[String: String]] = []
        var nonces: [String: String] = [:]
        var keySetFetches = 0
        var tokenRequests: [TokenRequest] = []
    }

    /// What one request to the token endpoint carried.
    struct TokenRequest: Sendable {
        /// The `Authorization` header, if any.
        let authorization: String?
        /// The form fields.
        let fields: [String: String]
    }

    /// The token endpoint's requests so far, oldest first.
    var tokenRequests: [TokenRequest] { state.withLock { $0.tokenRequests } }

    private init(issuer: URL, initialKeys: [[String: String]]) {
        self.issuer = issuer
        state = Mutex(State(keys: initialKeys))
    }

    /// How many times the JWK Set was fetched.
    var keySetFetches: Int { state.withLock { $0.keySetFetches } }

    /// Replaces the keys the JWK Set lists.
    func publish(_ keys: [[String: String]]) { state.withLock { $0.keys = keys } }

    /// `signingKey`'s public half as a JWK with `kid` (and `alg` when given).
    func publicJWK(kid: String? = nil, alg: String? = "ES256") -> [String: String] {
        Self.jwk(of: signingKey.publicKey, kid: kid ?? keyId, alg: alg)
    }

    /// A public ES256 key as a JWK.
    static func jwk(of key: ES256PublicKey, kid: String, alg: String?) -> [String: String] {
        var jwk = ["kty": "EC", "crv": "P-256", "kid": kid, "use": "sig"]
        if let parameters = key.parameters {
            jwk["x"] = parameters.x
            jwk["y"] = parameters.y
        }
        if let alg { jwk["alg"] = alg }
        return jwk
    }

    /// Claims of a valid id_token for this issuer and client, for `nonce`, issued now.
    func validClaims(nonce: String, now: Date = Date()) -> [String: JSONValue] {
        [
            "iss": .string(issuer.absoluteString), "sub": .string("hostile-test-user"), "aud": .string(clientId),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number(now.addingTimeInterval(300).timeIntervalSince1970.rounded(.down)), "nonce": .string(nonce),
        ]
    }

    /// `claims` signed with `key` (this issuer's by default), with `kid` in the header.
    func sign(
        _ claims: [String: JSONValue],
        kid: String? = nil,
        with key: ES256PrivateKey? = nil
    ) async throws
        -> String
    {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key ?? signingKey, kid: JWKIdentifier(string: kid ?? keyId))
        return try await keys.sign(AnyClaims(values: claims), kid: JWKIdentifier(string: kid ?? keyId))
    }

    /// `claims` as an unsecured JWT (`alg` none, empty signature).
    static func unsigned(_ claims: [String: JSONValue]) throws -> String {
        try compact(header: ["alg": .string("none"), "typ": .string("JWT")], claims: claims, signature: "")
    }

    /// A compact JWT of `header` and `claims` with `signature` (base64url) as its last segment, signed or not.
    static func compact(header: [String: JSONValue], claims: [String: JSONValue], signature: String) throws -> String {
        func segment(_ value: JSONValue) throws -> String {
            try JSONEncoder().encode(value).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return try segment(.object(header)) + "." + segment(.object(claims)) + "." + signature
    }

    /// Any claims, signed as they are.
    struct AnyClaims: JWTPayload {
        let values: [String: JSONValue]
        init(values: [String: JSONValue]) { self.values = values }
        init(from decoder: any Decoder) throws { values = try [String: JSONValue](from: decoder) }
        func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Runs `body` with an issuer whose token endpoint answers the id_token `makeIDToken` makes; the JWK Set
    /// lists the signing key unless `initialKeys` says otherwise. Discovery lists `tokenAuthMethods` and
    /// `signingAlgorithms` (`token_endpoint_auth_signing_alg_values_supported`) when given.
    static func with<Result: Sendable>(
        initialKeys: [[String: String]]? = nil,
        tokenAuthMethods: [String]? = nil,
        signingAlgorithms: [String]? = nil,
        idToken makeIDToken: @escaping IDTokenMaker,
        run body: @Sendable (TestIssuer) async throws -> Result
    ) async throws -> Result {
        let router = Router()
        let box = Mutex<TestIssuer?>(nil)
        @Sendable func current() throws -> TestIssuer {
            guard let issuer = box.withLock({ $0 }) else { throw HTTPError(.serviceUnavailable) }
            return issuer
        }
        router.get(".well-known/openid-configuration") { _, _ in
            let issuer = try current().issuer.absoluteString
            var document: [String: Any] = [
                "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
                "jwks_uri": issuer + "/jwks",
            ]
            if let tokenAuthMethods { document["token_endpoint_auth_methods_supported"] = tokenAuthMethods }
            if let signingAlgorithms {
                document["token_endpoint_auth_signing_alg_values_supported"] = signingAlgorithms
            }
            let body = try JSONSerialization.data(withJSONObject: document)
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        }
        router.get("authorize") { request, _ in
            let issuer = try current()
            let query = request.uri.queryParameters
            guard let redirect = query["redirect_uri"].map(String.init), let state = query["state"].map(String.init)
            else { throw HTTPError(.badRequest) }
            let code = UUID().uuidString
            issuer.state.withLock { $0.nonces[code] = query["nonce"].map(String.init) ?? "" }
            let location = "\(redirect)?code=\(code)&state=\(state)"
            return Response(status: .found, headers: [.location: location])
        }
        router.get("jwks") { _, _ in
            let issuer = try current()
            let keys = issuer.state.withLock { state in
                state.keySetFetches += 1
                return state.keys
            }
            let body = try JSONSerialization.data(withJSONObject: ["keys": keys])
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        }
        router.post("token") { request, context in
            let issuer = try current()
            let form = String(buffer: try await request.body.collect(upTo: 65_536))
            let fields = Dictionary(
                form.split(separator: "&").map { pair -> (String, String) in
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    return (parts[0], (parts.count > 1 ? parts[1] : "").removingPercentEncoding ?? "")
                },
                uniquingKeysWith: { first, _ in first }
            )
            let seen = TokenRequest(authorization: request.headers[.authorization], fields: fields)
            let nonce = issuer.state.withLock { state in
                state.tokenRequests.append(seen)
                return state.nonces.removeValue(forKey: fields["code"] ?? "")
            }
            guard let nonce else { return Self.json(["error": "invalid_grant"], status: .badRequest) }
            let idToken = try await makeIDToken(nonce, issuer)
            return Self.json([
                "access_token": "opaque-\(UUID().uuidString)", "token_type": "Bearer", "expires_in": "300",
                "refresh_token": "refresh-\(UUID().uuidString)", "id_token": idToken,
            ])
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: Logger(label: "test-issuer", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let group = ServiceGroup(
            configuration: .init(services: [application], logger: Logger(label: "test-issuer"))
        )
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var port = 0
        for await bound in ports { port = bound }
        guard let issuerURL = URL(string: "http://127.0.0.1:\(port)") else { throw FixtureError("no port") }
        let issuer = TestIssuer(issuer: issuerURL, initialKeys: [])
        issuer.publish(initialKeys ?? [issuer.publicJWK()])
        box.withLock { $0 = issuer }
        do {
            let result = try await body(issuer)
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
    }

    private static func json(_ object: [String: String], status: HTTPResponse.Status = .ok) -> Response {
        var fields = object as [String: Any]
        if let seconds = object["expires_in"].flatMap(Int.init) { fields["expires_in"] = seconds }
        let body = (try? JSONSerialization.data(withJSONObject: fields)) ?? Data()
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}
