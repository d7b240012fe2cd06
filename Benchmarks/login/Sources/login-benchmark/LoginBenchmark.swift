@_spi(LoginTimings) import CredentialVault
import Foundation
import KeyServiceMock
import VaultCrypto

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Password login split into its steps, next to a floor measured in the same run: the same two HTTP
/// requests made with a bare URLSession plus one atomic, fsync'd write of an envelope-sized file.
/// Then getAccessToken on a valid token, per call, next to a bare actor call. Medians throughout.
@main
enum LoginBenchmark {
    static let iterations = Int(ProcessInfo.processInfo.environment["LOGIN_ITERATIONS"] ?? "") ?? 40
    static let password = "benchmark password"

    static func main() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        var mock = KeyServiceMockConfiguration()
        mock.stateDirectory = root.appending(path: "mock-state")
        let server = try await KeyServiceMockServer.start(mock)
        defer { Task { await server.stop() } }

        let configuration = VaultConfiguration(
            issuer: server.issuer,
            clientId: "vault",
            keyServiceURL: server.keyServiceURL,
            storeDirectory: root.appending(path: "store")
        )
        let vault = try Vault(configuration: configuration)
        _ = try await vault.auth.performOpenIDConnectFlow { url in await follow(url) }
        try await vault.auth.storeRefreshToken(withNewPassword: password)

        print(
            "CredentialVault login benchmark: \(iterations) iterations per row, medians, one process, KeyServiceMock on 127.0.0.1"
        )
        print(
            "Argon2id \(Argon2idParameters.defaultOpsLimit) passes, \(Argon2idParameters.defaultMemLimitBytes >> 20) MiB; state in SQLite"
        )
        print("Login and floor rounds alternate; each floor round follows an untimed Argon2id of the same cost, as the")
        print("login's network part does, so both start from the caches and parked threads the KDF leaves.")
        print("")

        // Interleave login and floor rounds so both see the same machine load.
        var kdf: [Duration] = []
        var keyService: [Duration] = []
        var tokenEndpoint: [Duration] = []
        var sealWrite: [Duration] = []
        var total: [Duration] = []
        var floorKey: [Duration] = []
        var floorToken: [Duration] = []
        var floorWrite: [Duration] = []
        var floorTotal: [Duration] = []
        let bare = try await BareClient(server: server, directory: root.appending(path: "floor"))
        let clock = ContinuousClock()
        let floorParameters = try Argon2idParameters.generate()
        for _ in 0..<iterations {
            let started = clock.now
            _ = try await vault.auth.loginWithPassword(password: password)
            total.append(clock.now - started)
            let timings = try await vault.auth.lastLoginTimings.orThrow("no timings")
            kdf.append(timings.keyDerivation)
            keyService.append(timings.keyService)
            tokenEndpoint.append(timings.tokenEndpoint)
            sealWrite.append(timings.sealAndWrite)

            // The floor starts where the login's network part starts: right after an Argon2id of the same
            // cost (untimed), which leaves the CPU caches cold and the threads parked.
            _ = try await Argon2id.deriveKey(password: password, parameters: floorParameters, outputLength: 64)
            let floorStart = clock.now
            try await bare.getKey()
            let afterKey = clock.now
            try await bare.refresh()
            let afterToken = clock.now
            try bare.atomicWrite()
            let end = clock.now
            floorKey.append(afterKey - floorStart)
            floorToken.append(afterToken - afterKey)
            floorWrite.append(end - afterToken)
            floorTotal.append(end - floorStart)
        }
        let loginMinusKDF = zip(total, kdf).map { $0 - $1 }

        print("| step | login (median) | floor (median) |")
        print("| --- | ---: | ---: |")
        print("| Argon2id KDF | \(ms(median(kdf))) | n/a |")
        print("| key service `key` | \(ms(median(keyService))) | \(ms(median(floorKey))) |")
        print("| token endpoint refresh | \(ms(median(tokenEndpoint))) | \(ms(median(floorToken))) |")
        print("| seal + atomic write | \(ms(median(sealWrite))) | \(ms(median(floorWrite))) |")
        print("| total | \(ms(median(total))) | \(ms(median(floorTotal))) |")
        print("| login minus KDF | \(ms(median(loginMinusKDF))) | \(ms(median(floorTotal))) |")
        let loginRatio = seconds(median(loginMinusKDF)) / seconds(median(floorTotal))
        print("")
        print(String(format: "login minus KDF / floor = %.2fx (goal: at most 1.5x)", loginRatio))

        // getAccessToken on a valid token versus a bare actor call returning a cached value.
        let calls = 200_000
        let cached = Cached(value: try await vault.auth.getAccessToken())
        let auth = vault.auth
        // Both loops run in one detached task, off the main actor, so each call is one hop there and back.
        let (actorRuns, accessRuns) = try await Task.detached { () async throws -> ([Duration], [Duration]) in
            var actorRuns: [Duration] = []
            var accessRuns: [Duration] = []
            for _ in 0..<7 {
                let a = clock.now
                for _ in 0..<calls { blackHole(await cached.get()) }
                actorRuns.append((clock.now - a) / calls)
                let b = clock.now
                for _ in 0..<calls { blackHole(try await auth.getAccessToken()) }
                accessRuns.append((clock.now - b) / calls)
            }
            return (actorRuns, accessRuns)
        }.value
        let accessRatio = seconds(median(accessRuns)) / seconds(median(actorRuns))
        print("")
        print("| call | per call (median of 7 runs of \(calls)) |")
        print("| --- | ---: |")
        print("| bare actor call | \(ns(median(actorRuns))) |")
        print("| getAccessToken, valid token | \(ns(median(accessRuns))) |")
        print("")
        print(String(format: "getAccessToken / bare actor call = %.2fx (goal: at most 3x)", accessRatio))

        print("")
        try await TLSRow.run(iterations: iterations, password: password, root: root)
        print("")
        try await ProtocolV2Row.run(iterations: iterations, password: password, root: root)
    }

    static func follow(_ url: URL, transport: any HTTPTransport = DefaultHTTPTransport.make()) async {
        var next = url
        for _ in 0..<5 {
            guard let response = try? await transport.send(HTTPRequest(method: "GET", url: next)),
                (300..<400).contains(response.status), let location = response.headers["location"],
                let target = URL(string: location, relativeTo: next)?.absoluteURL
            else { return }
            next = target
        }
    }

    static func median(_ values: [Duration]) -> Duration {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func ms(_ duration: Duration) -> String { String(format: "%.2f ms", seconds(duration) * 1000) }
    static func ns(_ duration: Duration) -> String { String(format: "%.0f ns", seconds(duration) * 1e9) }

    static func temporaryDirectory() throws -> URL {
        var template = Array((FileManager.default.temporaryDirectory.path + "/login-benchmark-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
        return URL(fileURLWithPath: String(cString: made))
    }
}

/// The baseline: an actor that hands out a stored token, nothing else.
actor Cached {
    private var value: AccessToken
    init(value: AccessToken) { self.value = value }
    func get() -> AccessToken { value }
}

/// Keeps the optimiser from deleting a call whose result is unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw BenchmarkError(message) }
        return self
    }
}

/// The floor: the two requests of a password login made with a bare URLSession, and one atomic write.
final class BareClient: @unchecked Sendable {
    // @unchecked Sendable: used from one task at a time by the benchmark loop; `refreshToken` is only
    // read and written between awaits of that loop.
    private let session = URLSession(configuration: .ephemeral)
    private let keyURL: URL
    private let tokenURL: URL
    private let keyBody: Data
    private var refreshToken: String
    private let directory: URL
    private let envelope = Data(repeating: 0x61, count: 700)

    init(server: KeyServiceMockServer, directory: URL) async throws {
        keyURL = server.keyServiceURL.appending(path: "key")
        tokenURL = server.issuer.appending(path: "protocol/openid-connect/token")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = Base64URL.encode(SecureRandom.bytes(count: 32))
        var create = URLRequest(url: server.keyServiceURL.appending(path: "createkey"))
        create.httpMethod = "POST"
        create.setValue("application/json", forHTTPHeaderField: "Content-Type")
        create.httpBody = Data(#"{"secret":"\#(secret)"}"#.utf8)
        let (created, _) = try await session.data(for: create)
        let keyId = try (JSONSerialization.jsonObject(with: created) as? [String: Any])?["keyid"] as? String ?? ""
        keyBody = Data(#"{"keyid":"\#(keyId)","secret":"\#(secret)"}"#.utf8)

        var grant = URLRequest(url: tokenURL)
        grant.httpMethod = "POST"
        grant.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        grant.httpBody = Data(
            "grant_type=password&client_id=vault&username=demo&password=demo-password&scope=openid%20offline_access"
                .utf8
        )
        let (tokens, _) = try await session.data(for: grant)
        refreshToken =
            try (JSONSerialization.jsonObject(with: tokens) as? [String: Any])?["refresh_token"] as? String ?? ""
    }

    func getKey() async throws {
        var request = URLRequest(url: keyURL)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = keyBody
        _ = try await session.data(for: request)
    }

    func refresh() async throws {
        var request = URLRequest(url: tokenURL)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let token = refreshToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        request.httpBody = Data("grant_type=refresh_token&client_id=vault&refresh_token=\(token)".utf8)
        let (data, _) = try await session.data(for: request)
        refreshToken =
            try (JSONSerialization.jsonObject(with: data) as? [String: Any])?["refresh_token"] as? String ?? ""
    }

    func atomicWrite() throws {
        FloorWrite.store(envelope, in: directory)
    }
}
