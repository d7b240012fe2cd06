import Foundation
import KeyServiceMock
import Testing
import VaultCrypto
import VaultTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer, read in full.
struct HTTPAnswer: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// The body as a JSON object (empty when it is not one).
    var json: JSONObject { JSONObject(body) }

    func string(_ field: String) -> String? {
        json.string(field)
    }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A small HTTP client for talking to the server as any other process would (``TestHTTP``: AsyncHTTPClient, no
/// redirects followed, so a test sees the 302 itself). Each request is given ``TestHTTP/readTimeout``: the alone
/// tier's lockout hammers (a thousand attempts each) share the process's derivation places with every other suite,
/// and a fresh clone's run on two cores had key calls of other suites wait past 30 s behind them.
struct HTTPClient: Sendable {
    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        let answer = try await TestHTTP.send(request)
        // One entry a field, by its lowercased name (field names are case-insensitive), repeats joined by commas.
        var headers: [String: String] = [:]
        for (name, value) in answer.headers {
            headers[name.lowercased()] = headers[name.lowercased()].map { "\($0), \(value)" } ?? value
        }
        return HTTPAnswer(status: answer.status, headers: headers, body: answer.body)
    }

    func get(_ url: URL, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(request)
    }

    func post(_ url: URL, body: Data, contentType: String = "application/json") async throws -> HTTPAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        return try await send(request)
    }

    func post(_ url: URL, json: [String: String]) async throws -> HTTPAnswer {
        try await post(url, body: try JSONSerialization.data(withJSONObject: json))
    }

    func post(_ url: URL, form: [String: String]) async throws -> HTTPAnswer {
        try await post(url, body: Data(formEncoded(form).utf8), contentType: "application/x-www-form-urlencoded")
    }
}

/// The status of the answer to `request`, or 0 when it got no HTTP answer at all.
///
/// Requests made side by side in a task group report a failure this way instead of throwing, so that one failed
/// request does not cancel the others and every status is counted.
func status(of request: () async throws -> HTTPAnswer) async -> Int {
    (try? await request().status) ?? 0
}

func formEncoded(_ fields: [String: String]) -> String {
    let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    return fields.sorted { $0.key < $1.key }.map { name, value in
        "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed)!)"
    }.joined(separator: "&")
}

/// The key service's two calls, as a TIM client makes them.
struct KeyServiceCalls: Sendable {
    let base: URL
    let http: HTTPClient

    func createKey(secret: String) async throws -> HTTPAnswer {
        try await http.post(base.appendingPathComponent("createkey"), json: ["secret": secret])
    }

    func key(_ keyId: String, secret: String) async throws -> HTTPAnswer {
        try await http.post(base.appendingPathComponent("key"), json: ["keyid": keyId, "secret": secret])
    }

    func key(_ keyId: String, longSecret: String) async throws -> HTTPAnswer {
        try await http.post(base.appendingPathComponent("key"), json: ["keyid": keyId, "longsecret": longSecret])
    }

    /// Creates a key and returns its id and long secret.
    func newKey(secret: String) async throws -> (keyId: String, longSecret: String, key: String) {
        let answer = try await createKey(secret: secret)
        #expect(answer.status == 200)
        return (
            try #require(answer.string("keyid")), try #require(answer.string("longsecret")),
            try #require(answer.string("key"))
        )
    }
}

/// A new empty directory under the temporary directory, mode 0700 (as a state directory must be).
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
        at: url,
        withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700]
    )
    return url
}

/// A JSON object, read field by field.
struct JSONObject: Sendable {
    let data: Data

    init(_ data: Data) {
        self.data = data
    }

    private var object: [String: Any] {
        ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
    }

    var isEmpty: Bool { object.isEmpty }

    func has(_ field: String) -> Bool { object[field] != nil }

    func string(_ field: String) -> String? { object[field] as? String }

    func int(_ field: String) -> Int? { (object[field] as? NSNumber)?.intValue }

    func bool(_ field: String) -> Bool? { object[field] as? Bool }

    func strings(_ field: String) -> [String]? { object[field] as? [String] }

    func object(_ field: String) -> JSONObject? {
        guard let value = object[field], let data = try? JSONSerialization.data(withJSONObject: value) else {
            return nil
        }
        return JSONObject(data)
    }

    func objects(_ field: String) -> [JSONObject] {
        guard let values = object[field] as? [Any] else { return [] }
        return values.compactMap { value in
            (try? JSONSerialization.data(withJSONObject: value)).map(JSONObject.init)
        }
    }
}

/// The claims of a JWT, unverified (tests verify signatures separately).
func claims(of token: String) throws -> JSONObject {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    try #require(parts.count == 3)
    return JSONObject(try Base64URL.decode(parts[1]))
}

/// The header of a JWT.
func header(of token: String) throws -> JSONObject {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    try #require(parts.count == 3)
    return JSONObject(try Base64URL.decode(parts[0]))
}
