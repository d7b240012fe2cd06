import CredentialVault
import Foundation
import KeyServiceMock
import Testing

/// Issue 15's wire proof: the key service and the token endpoint each down, slow past the timeout, failing with a
/// 500, answering garbage with a 200, sending a body over the size cap, or closing the connection half-way. Every case
/// is a password login over real HTTP on loopback that must end in its documented error, leave every stored byte as
/// it was, count no wrong password (here or at the key service), and let the right password in once the fault is gone.
@Suite("wire proof: faults on the wire end in their documented errors and change nothing stored")
struct WireFaultProofTests {
    enum Endpoint: String, CaseIterable, Sendable {
        case keyService = "key service"
        case tokenEndpoint = "token endpoint"
    }

    enum Fault: String, CaseIterable, Sendable {
        case down
        case slow = "slow past the timeout"
        case serverError = "HTTP 500"
        case garbage = "garbage 200"
        case oversized = "body over the size cap"
        case truncated = "closed half-way"
    }

    /// The documented error of a case: its kind, the questions' answers, and words of its message.
    struct Expectation {
        let kind: VaultError.Kind
        let isNetworkError: Bool
        let words: String
    }

    /// What one case did.
    struct Outcome {
        var error: VaultError?
        var loggedIn = false
        var storeChanged = false
        var wrongPasswordsHere = 0
        var failuresAtKeyService: Int?
        var recovered = false
    }

    static let password = "wire fault password"
    /// The short timeout of the slow cases; the stall outlasts it.
    static let shortTimeout: TimeInterval = 2

    static func expectation(_ endpoint: Endpoint, _ fault: Fault) -> Expectation {
        switch (endpoint, fault) {
        case (.keyService, .down):
            Expectation(kind: .unreachable, isNetworkError: true, words: "reach the key service at 127.0.0.1")
        case (.keyService, .slow):
            Expectation(kind: .timedOut, isNetworkError: true, words: "The key service at 127.0.0.1 gave no answer")
        case (.keyService, .serverError):
            Expectation(kind: .serverRefused, isNetworkError: false, words: "at 127.0.0.1 failed with a server error")
        case (.keyService, .garbage):
            Expectation(kind: .unexpectedAnswer, isNetworkError: false, words: "answered with data that is not a key")
        case (.keyService, .oversized):
            Expectation(kind: .unexpectedAnswer, isNetworkError: false, words: "at 127.0.0.1 sent an unusable answer")
        case (.keyService, .truncated):
            Expectation(
                kind: .unreachable,
                isNetworkError: true,
                words: "key service at 127.0.0.1: the connection was dropped mid-answer"
            )
        case (.tokenEndpoint, .down):
            Expectation(
                kind: .unreachable,
                isNetworkError: true,
                words: "token endpoint at 127.0.0.1: connection refused"
            )
        case (.tokenEndpoint, .slow):
            Expectation(kind: .timedOut, isNetworkError: true, words: "token endpoint at 127.0.0.1 gave no answer")
        case (.tokenEndpoint, .serverError):
            Expectation(
                kind: .serverRefused,
                isNetworkError: false,
                words: "at 127.0.0.1 refused the request with HTTP 500"
            )
        case (.tokenEndpoint, .garbage):
            Expectation(
                kind: .unexpectedAnswer,
                isNetworkError: false,
                words: "at 127.0.0.1 gave no usable access token"
            )
        case (.tokenEndpoint, .oversized):
            Expectation(kind: .unexpectedAnswer, isNetworkError: false, words: "larger than 1 MiB")
        case (.tokenEndpoint, .truncated):
            Expectation(
                kind: .unreachable,
                isNetworkError: true,
                words: "token endpoint at 127.0.0.1: the connection was dropped mid-answer"
            )
        }
    }

    /// Everything a case did that it must not have: empty when it ended as documented.
    static func misses(_ outcome: Outcome, _ endpoint: Endpoint, _ fault: Fault) -> [String] {
        let expected = expectation(endpoint, fault)
        var misses: [String] = []
        guard let error = outcome.error else { return ["the login succeeded through the fault"] }
        if error.kind != expected.kind { misses.append("kind \(error.kind), expected \(expected.kind)") }
        if error.isNetworkError != expected.isNetworkError {
            misses.append("isNetworkError is \(error.isNetworkError)")
        }
        if error.isKeyServiceError != (endpoint == .keyService) {
            misses.append("isKeyServiceError is \(error.isKeyServiceError)")
        }
        if error.isWrongPassword || error.isKeyLocked { misses.append("read as a wrong password or a lock") }
        if error.isLoginExpired || error.isConfigurationError { misses.append("read as \(error.kind)") }
        if !error.description.contains(expected.words) { misses.append("message: \(error.description)") }
        if outcome.loggedIn { misses.append("a session is open") }
        if outcome.storeChanged { misses.append("a stored byte changed") }
        if outcome.wrongPasswordsHere != 0 {
            misses.append("\(outcome.wrongPasswordsHere) wrong passwords counted here")
        }
        if outcome.failuresAtKeyService != 0 {
            misses.append("the key service counted \(outcome.failuresAtKeyService.map(String.init) ?? "?") failures")
        }
        if !outcome.recovered { misses.append("the right password did not log in after the fault") }
        return misses
    }

    /// Registers a user, switches the fault on, logs in with the right password through a client built as an app
    /// would (a restart: no session), then checks the store and the counts and logs in again without the fault.
    static func run(
        _ endpoint: Endpoint,
        _ fault: Fault,
        transport: any HTTPTransport = URLSessionTransport()
    ) async throws -> Outcome {
        try await AuthFixture.with { fixture in
            try await RefusingPort.with { refusing in
                let userId = try await fixture.register(password: password)
                let base = fixture.configuration
                let store = try #require(base.storeDirectory)
                let keyId = try envelopeKeyId(in: store)
                let down = fault == .down
                // Down: the endpoint's address refuses connections while the other endpoint keeps answering.
                var configuration = base
                if down, endpoint == .tokenEndpoint {
                    configuration.providerMetadata = try await metadata(
                        fixture.vault.auth.metadata(),
                        tokenEndpointAt: refusing
                    )
                }
                if fault == .slow, endpoint == .tokenEndpoint { configuration.requestTimeout = shortTimeout }
                let keyService = try HTTPKeyService(
                    baseURL: down && endpoint == .keyService
                        ? refusing.appending(path: base.keyServiceURL.path) : base.keyServiceURL,
                    transport: transport,
                    timeout: fault == .slow && endpoint == .keyService ? shortTimeout : base.requestTimeout,
                    logger: base.logger
                )
                let storage = UserStorage(
                    keyService: keyService,
                    directory: store,
                    binding: EnvelopeBinding(
                        issuer: base.issuer,
                        clientId: base.clientId,
                        keyServiceURL: base.keyServiceURL
                    ),
                    opsLimit: base.opsLimit,
                    memLimitBytes: base.memLimitBytes,
                    now: base.now
                )
                let auth = Auth(configuration: configuration, userStorage: storage, transport: transport)

                let scope: FaultInjection.Scope = endpoint == .keyService ? .keyService : .tokenEndpoint
                if let injected = injected(fault) { fixture.server.faults.set(injected, for: scope) }
                let before = try StoreSnapshot(of: store)
                var outcome = Outcome()
                do throws(VaultError) {
                    _ = try await auth.loginWithPassword(userId: userId, password: password)
                } catch {
                    outcome.error = error
                }
                fixture.server.faults.set(nil, for: scope)
                outcome.loggedIn = await auth.isLoggedIn
                outcome.storeChanged = try StoreSnapshot(of: store) != before
                outcome.wrongPasswordsHere = await storage.consecutiveWrongPasswords(userId: userId)
                outcome.failuresAtKeyService = await fixture.server.failedAttempts(keyId: keyId)
                outcome.recovered =
                    (try? await fixture.restarted().auth.loginWithPassword(userId: userId, password: password)) != nil
                return outcome
            }
        }
    }

    /// The fault KeyServiceMock injects for a case (none for `down`: nothing listens there).
    static func injected(_ fault: Fault) -> FaultInjection.Fault? {
        switch fault {
        case .down: nil
        case .slow: .stall(.seconds(5))
        case .serverError: .internalServerError
        case .garbage: .undecodableBody
        case .oversized: .oversizedBody(bytes: 2 * HTTPRequest.defaultMaximumAnswerSize)
        case .truncated: .truncatedBody
        }
    }

    /// `discovered`, with the token endpoint's path moved to `base` (where nothing listens).
    static func metadata(_ discovered: ProviderMetadata, tokenEndpointAt base: URL) throws -> ProviderMetadata {
        try ProviderMetadata(
            issuer: discovered.issuer,
            issuerIdentifier: discovered.issuerIdentifier,
            authorizationEndpoint: discovered.authorizationEndpoint,
            tokenEndpoint: base.appending(path: discovered.tokenEndpoint.path),
            revocationEndpoint: discovered.revocationEndpoint,
            jwksURI: discovered.jwksURI,
            tokenEndpointAuthMethods: discovered.tokenEndpointAuthMethods
        )
    }

    /// The key id of the one envelope in `store`, from its (plain) header.
    static func envelopeKeyId(in store: URL) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: store.path).filter { $0.hasSuffix(".vault") }
        guard names.count == 1 else { throw FixtureError("expected one envelope, found \(names)") }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: store.appending(path: names[0])))
        guard let keyId = (object as? [String: Any])?["keyId"] as? String else {
            throw FixtureError("the envelope names no keyId")
        }
        return keyId
    }

    @Test("2 endpoints x 6 faults: the documented error, no stored byte changed, no wrong password counted")
    func everyFault() async throws {
        var cases = 0
        var documented = 0
        var storesChanged = 0
        var wrongPasswords = 0
        var recovered = 0
        for endpoint in Endpoint.allCases {
            for fault in Fault.allCases {
                let outcome = try await Self.run(endpoint, fault)
                let misses = Self.misses(outcome, endpoint, fault)
                cases += 1
                if outcome.error != nil, misses.allSatisfy({ $0.hasPrefix("the right password") }) { documented += 1 }
                if outcome.storeChanged { storesChanged += 1 }
                if outcome.wrongPasswordsHere != 0 || outcome.failuresAtKeyService != 0 { wrongPasswords += 1 }
                if outcome.recovered { recovered += 1 }
                #expect(misses.isEmpty, "\(endpoint.rawValue), \(fault.rawValue): \(misses.joined(separator: "; "))")
            }
        }
        print(
            "PROOF wire: \(cases) cases, \(documented) documented errors, \(storesChanged) stores changed, "
                + "\(wrongPasswords) wrong-password counts, \(recovered) logins after the fault"
        )
        #expect(cases == 12)
    }

    @Test("the checker flags a planted transport that reads a timeout as a wrong password (and so writes the store)")
    func plantedDefect() async throws {
        let outcome = try await Self.run(.keyService, .slow, transport: TimeoutAsWrongPassword())
        let misses = Self.misses(outcome, .keyService, .slow)
        #expect(outcome.error?.isWrongPassword == true)
        #expect(misses.contains("read as a wrong password or a lock"), "\(misses)")
        #expect(misses.contains("a stored byte changed"), "\(misses)")
        #expect(misses.contains("1 wrong passwords counted here"), "\(misses)")
        print("wire checker, planted defect (a timeout read as HTTP 401): \(misses.count) misses flagged")
    }

    /// The planted defect: a transport that answers its own timeout with a 401, as a careless retry layer might.
    struct TimeoutAsWrongPassword: HTTPTransport {
        let inner = URLSessionTransport()

        func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
            do {
                return try await inner.send(request)
            } catch {
                guard error.kind == .timedOut else { throw error }
                return HTTPResponse(status: 401)
            }
        }
    }
}
