import Foundation
import Testing
import VaultTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer, read in full.
struct HTTPAnswer: Sendable {
    let status: Int
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    /// A string field of a JSON object body.
    func string(_ field: String) -> String? {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?[field] as? String
    }
}

/// A small HTTP client, talking to the server as any other process would (``TestHTTP``: AsyncHTTPClient, each
/// request given ``TestHTTP/readTimeout``: the alone tier's hammers share the machine with every other suite).
struct HTTPClient: Sendable {
    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        let answer = try await TestHTTP.send(request)
        return HTTPAnswer(status: answer.status, body: answer.body)
    }

    func get(_ url: URL) async throws -> HTTPAnswer {
        try await send(URLRequest(url: url))
    }

    func post(_ url: URL, json: [String: String]) async throws -> HTTPAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        return try await send(request)
    }
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

    /// Creates a key and returns its id, long secret and key.
    func newKey(secret: String) async throws -> (keyId: String, longSecret: String, key: String) {
        let answer = try await createKey(secret: secret)
        try #require(answer.status == 200)
        return (
            try #require(answer.string("keyid")), try #require(answer.string("longsecret")),
            try #require(answer.string("key"))
        )
    }
}

/// The status of the answer to `request`, 0 when none came: a task group's children never throw, so one failed
/// request does not cancel the others and every status is counted.
func status(of request: () async throws -> HTTPAnswer) async -> Int {
    (try? await request().status) ?? 0
}

/// A new directory of mode 700 under the temporary directory.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyservice-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
        at: url,
        withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700]
    )
    return url
}
