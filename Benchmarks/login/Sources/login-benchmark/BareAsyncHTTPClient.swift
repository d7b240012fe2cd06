import AsyncHTTPClient
import Foundation
import KeyServiceMock
import NIOCore
import NIOSSL
import VaultCrypto

/// The TLS row's floor: the two requests of a password login made with a bare AsyncHTTPClient that trusts the
/// benchmark's certificate authority (connections kept and reused, as the vault's shared client keeps them), and one
/// atomic write.
final class BareAsyncHTTPClient: @unchecked Sendable {
    // @unchecked Sendable: used from one task at a time by the benchmark loop; `refreshToken` is only read and
    // written between awaits of that loop.
    private let client: HTTPClient
    private let keyURL: URL
    private let tokenURL: URL
    private var keyBody = Data()
    private var refreshToken = ""
    private let directory: URL
    private let envelope = Data(repeating: 0x61, count: 700)

    init(server: KeyServiceMockServer, authorityPEM: String, directory: URL) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(authorityPEM.utf8)))]
        client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        )
        keyURL = server.keyServiceURL.appending(path: "key")
        tokenURL = server.issuer.appending(path: "protocol/openid-connect/token")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = Base64URL.encode(SecureRandom.bytes(count: 32))
        let created = try await post(
            server.keyServiceURL.appending(path: "createkey"),
            json: Data(#"{"secret":"\#(secret)"}"#.utf8)
        )
        let keyId = try (JSONSerialization.jsonObject(with: created) as? [String: Any])?["keyid"] as? String ?? ""
        keyBody = Data(#"{"keyid":"\#(keyId)","secret":"\#(secret)"}"#.utf8)
        let tokens = try await post(
            tokenURL,
            form:
                "grant_type=password&client_id=vault&username=demo&password=demo-password&scope=openid%20offline_access"
        )
        refreshToken =
            try (JSONSerialization.jsonObject(with: tokens) as? [String: Any])?["refresh_token"] as? String ?? ""
    }

    func getKey() async throws {
        _ = try await post(keyURL, json: keyBody)
    }

    func refresh() async throws {
        let token = refreshToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let data = try await post(tokenURL, form: "grant_type=refresh_token&client_id=vault&refresh_token=\(token)")
        refreshToken =
            try (JSONSerialization.jsonObject(with: data) as? [String: Any])?["refresh_token"] as? String ?? ""
    }

    func atomicWrite() {
        FloorWrite.store(envelope, in: directory)
    }

    func shutdown() async throws {
        try await client.shutdown()
    }

    private func post(_ url: URL, json: Data) async throws -> Data {
        try await post(url, contentType: "application/json", body: json)
    }

    private func post(_ url: URL, form: String) async throws -> Data {
        try await post(url, contentType: "application/x-www-form-urlencoded", body: Data(form.utf8))
    }

    private func post(_ url: URL, contentType: String, body: Data) async throws -> Data {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchmarkError("POST \(url) answered \(response.status)") }
        return Data(answer.readableBytesView)
    }
}
