import Foundation
import VaultTestSupport

/// `keyservice` instances on one ``PostgresServer`` behind one ``NginxServer``, all stopped at the end of
/// ``with(instances:on:secrets:arguments:_:)``. The instances share their secrets through the environment, as the
/// operator page says every instance on one database must.
struct KeyServiceCluster: Sendable {
    /// The secrets every instance gets: pepper 1 and the signing seed, base64 of 32 random bytes each.
    struct Secrets: Sendable {
        let environment: [String: String]

        init() {
            func random() -> String { Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() }
            environment = ["KEYSERVICE_PEPPER_1": random(), "KEYSERVICE_SIGNING_SEED": random()]
        }
    }

    let instances: [KeyServiceProcess]
    let nginx: NginxServer
    let http: HTTPClient

    /// The key-service calls through nginx.
    func calls() -> KeyServiceCalls {
        KeyServiceCalls(base: URL(string: nginx.baseURL + "/keyservice/v1")!, http: http)
    }

    /// kill -9 of every instance (each one's whole process group).
    func killAll() {
        for instance in instances { instance.child.killGroup() }
    }

    /// Runs `body` with `instances` keyservice processes on `server`'s database behind nginx.
    static func with<Result>(
        instances count: Int,
        on server: PostgresServer,
        secrets: Secrets = Secrets(),
        arguments: [String] = [],
        _ body: (KeyServiceCluster) async throws -> Result
    ) async throws -> Result {
        let environment = ProcessInfo.processInfo.environment.merging(secrets.environment) { _, new in new }
        var instances: [KeyServiceProcess] = []
        defer { for instance in instances { instance.child.killGroup() } }
        for _ in 0..<count {
            instances.append(
                try await KeyServiceProcess.launch(
                    ["--database", server.url, "--client-address-header", "X-Real-IP"] + arguments,
                    environment: environment
                )
            )
        }
        let ports = instances.compactMap { $0.baseURL.port }
        return try await NginxServer.with(upstreams: ports) { nginx in
            try await body(KeyServiceCluster(instances: instances, nginx: nginx, http: HTTPClient()))
        }
    }
}
