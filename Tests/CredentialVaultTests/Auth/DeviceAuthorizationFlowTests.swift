import CredentialVault
import Foundation
import KeyServiceMock
import Synchronization
import Testing

/// The waits a device login asked for, in whole seconds, each moving the fixture's clock by as much (so the issuer
/// and the library see that time pass) and then running `onWait` with the wait's number (1 is the first): the user
/// acting at the verification page between two polls.
final class WaitRecorder: Sendable {
    private let waits = Mutex<[Int64]>([])
    private let clock = Mutex<ManualClock?>(nil)
    private let onWait: @Sendable (Int) async -> Void
    /// Seconds the clock moves beyond each wait: time the user let pass.
    private let extra: TimeInterval

    init(extra: TimeInterval = 0, onWait: @escaping @Sendable (Int) async -> Void = { _ in }) {
        self.extra = extra
        self.onWait = onWait
    }

    var recorded: [Int64] { waits.withLock { $0 } }

    func attach(_ clock: ManualClock) { self.clock.withLock { $0 = clock } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            let count = waits.withLock {
                $0.append(duration.components.seconds)
                return $0.count
            }
            clock.withLock { $0 }?.advance(by: TimeInterval(duration.components.seconds) + extra)
            await onWait(count)
        }
    }
}

/// What the presenter was given, and the user's action at the verification page.
final class DeviceUser: Sendable {
    private let shown = Mutex<DeviceAuthorization?>(nil)

    var authorization: DeviceAuthorization? { shown.withLock { $0 } }

    func saw(_ authorization: DeviceAuthorization) { shown.withLock { $0 = authorization } }

    /// Opens `verification_uri_complete` (the mock approves as its first user), or denies.
    func act(approve: Bool = true) async {
        guard let complete = authorization?.verificationURIComplete else { return }
        let url = URL(string: complete.absoluteString + (approve ? "" : "&action=deny"))!
        _ = try? await TestTLS.transport().send(HTTPRequest(method: "GET", url: url, timeout: 60))
    }
}

@Suite("device authorization grant (RFC 8628)")
struct DeviceAuthorizationFlowTests {
    @Test(
        "the user is shown the verification URI, user code and complete URI; approved, the login seals as the code flow's"
    )
    func approved() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 1 { await user.act() } }
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            #expect(
                try await fixture.vault.auth.metadata().deviceAuthorizationEndpoint?.path
                    == "/auth/realms/demo/protocol/openid-connect/auth/device"
            )
            let userId = try await fixture.vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            let shown = try #require(user.authorization)
            #expect(shown.verificationURI.path.hasSuffix("/device"))
            #expect(shown.userCode.count == 9 && shown.userCode.contains("-"))
            #expect(shown.verificationURIComplete?.query?.contains("user_code=") == true)
            #expect(userId == "demo-user")
            #expect(waits.recorded == [5])
            // The id token was validated: the session holds it.
            #expect(await fixture.vault.auth.idToken?.userId == "demo-user")
            try await fixture.vault.auth.storeRefreshToken(withNewPassword: AuthFixture.password)
            let restarted = try fixture.restarted()
            _ = try await restarted.auth.loginWithPassword(userId: userId, password: AuthFixture.password)
            _ = try await restarted.auth.getAccessToken()
        }
    }

    @Test("step-up as in the code flow: max_age checked against auth_time, acr_values kept with the login")
    func stepUp() async throws {
        for (age, accepted) in [(600.0, false), (30.0, true)] {
            let user = DeviceUser()
            let waits = WaitRecorder { number in if number == 1 { await user.act() } }
            try await AuthFixture.with(authenticationAge: age, deviceFlow: DeviceFlowMode(), sleep: waits.sleep) {
                fixture in
                waits.attach(fixture.clock)
                var configuration = fixture.configuration
                configuration.maxAge = 60
                configuration.acrValues = ["mfa"]
                let vault = try Vault(configuration: configuration, transport: fixture.transport)
                if accepted {
                    _ = try await vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
                    #expect(await vault.auth.loginContext?.requestedACRValues == ["mfa"])
                } else {
                    let error = await #expect(throws: VaultError.self) {
                        try await vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
                    }
                    #expect(error?.kind == .authenticationTooOld, "\(String(describing: error))")
                    #expect(await vault.auth.refreshToken == nil)
                }
            }
        }
    }

    @Test("authorization_pending: polls again after the server's interval until the user approves")
    func pendingThenApproved() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 3 { await user.act() } }
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(interval: 3), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            _ = try await fixture.vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            #expect(waits.recorded == [3, 3, 3])
            #expect(fixture.server.tokenRequests(grantType: "urn:ietf:params:oauth:grant-type:device_code") == 3)
        }
    }

    @Test("no interval: 5 s; every slow_down adds 5 s for that poll and every later one")
    func slowDownIsCumulative() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 6 { await user.act() } }
        try await AuthFixture.with(
            deviceFlow: DeviceFlowMode(interval: nil, slowDownPolls: [2, 4]),
            sleep: waits.sleep
        ) { fixture in
            waits.attach(fixture.clock)
            _ = try await fixture.vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            // Polls: pending, slow_down, pending, slow_down, pending, tokens.
            #expect(waits.recorded == [5, 5, 10, 10, 15, 15])
            #expect(await fixture.vault.auth.isLoggedIn)
        }
    }

    /// The real transport, but the device-code polls numbered in `dropped` (1 is the first) get no answer: the
    /// connection drops after the request went out, as on a flaky network.
    private final class DroppingPolls: HTTPTransport {
        let inner: any HTTPTransport
        let dropped: Set<Int>
        private let polls = Mutex(0)

        init(_ inner: any HTTPTransport, dropping dropped: Set<Int>) {
            self.inner = inner
            self.dropped = dropped
        }

        func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
            let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
            // Only a poll carries the field `device_code`.
            if body.split(separator: "&").contains(where: { $0.hasPrefix("device_code=") }) {
                let number = polls.withLock {
                    $0 += 1
                    return $0
                }
                if dropped.contains(number) {
                    throw TransportError(kind: .noResponse, host: request.url.host ?? "", reason: "connection reset")
                }
            }
            return try await inner.send(request)
        }
    }

    @Test(
        "a poll that gets no answer is sent again after twice the wait (RFC 8628 section 3.5), the code kept; an answer brings back the interval"
    )
    func unansweredPollBacksOff() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 4 { await user.act() } }
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            let vault = try Vault(
                configuration: fixture.configuration,
                transport: DroppingPolls(fixture.transport, dropping: [1, 2])
            )
            _ = try await vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            // Polls 1 and 2 dropped (the wait doubles after each), poll 3 answered (pending: the issuer's interval
            // again), poll 4 brings the tokens.
            #expect(waits.recorded == [5, 10, 20, 5])
            #expect(await vault.auth.isLoggedIn)
            #expect(fixture.server.tokenRequests(grantType: "urn:ietf:params:oauth:grant-type:device_code") == 2)
        }
    }

    @Test("five polls in a row without an answer end the login with a network error, nothing kept")
    func unansweredPollsEnd() async throws {
        let waits = WaitRecorder()
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            let vault = try Vault(
                configuration: fixture.configuration,
                transport: DroppingPolls(fixture.transport, dropping: Set(1...10))
            )
            let error = await #expect(throws: VaultError.self) {
                try await vault.auth.performDeviceAuthorizationFlow { _ in }
            }
            #expect(error?.isNetworkError == true, "\(String(describing: error))")
            // The interval doubles up to the 60 s ceiling.
            #expect(waits.recorded == [5, 10, 20, 40, 60])
            #expect(await vault.auth.isLoggedIn == false)
        }
    }

    @Test("access_denied is authorizationDenied, and nothing is kept")
    func denied() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 2 { await user.act(approve: false) } }
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            }
            #expect(error?.isAuthorizationDenied == true, "\(String(describing: error))")
            #expect(error?.description.contains("denied") == true)
            #expect(waits.recorded == [5, 5])
            #expect(await fixture.vault.auth.isLoggedIn == false)
            let stored = try await fixture.vault.userStorage.availableUserIds
            #expect(stored.isEmpty)
        }
    }

    @Test("expired_token from the issuer is deviceCodeExpired")
    func expiredAtTheIssuer() async throws {
        // The user went away: far more time passes at the issuer than the wait.
        let waits = WaitRecorder(extra: 4000)
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performDeviceAuthorizationFlow { _ in }
            }
            #expect(error?.isDeviceCodeExpired == true, "\(String(describing: error))")
            #expect(fixture.server.tokenRequests(grantType: "urn:ietf:params:oauth:grant-type:device_code") == 1)
            #expect(await fixture.vault.auth.isLoggedIn == false)
        }
    }

    @Test("the library stops at expires_in by itself: no poll after the code's lifetime")
    func stopsAtExpiresIn() async throws {
        let waits = WaitRecorder()
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(interval: 5, expiresIn: 12), sleep: waits.sleep) {
            fixture in
            waits.attach(fixture.clock)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performDeviceAuthorizationFlow { _ in }
            }
            #expect(error?.isDeviceCodeExpired == true)
            #expect(waits.recorded == [5, 5])
            #expect(fixture.server.tokenRequests(grantType: "urn:ietf:params:oauth:grant-type:device_code") == 2)
        }
    }

    @Test("polls are bounded in count")
    func boundedPolls() async throws {
        let waits = WaitRecorder()
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: waits.sleep) { fixture in
            waits.attach(fixture.clock)
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performDeviceAuthorizationFlow(maximumPolls: 3) { _ in }
            }
            #expect(error?.isDeviceCodeExpired == true)
            #expect(waits.recorded == [5, 5, 5])
        }
    }

    @Test("cancelling the task ends the wait with .cancelled")
    func cancellable() async throws {
        let (entered, signal) = AsyncStream<Void>.makeStream()
        let sleep: @Sendable (Duration) async throws -> Void = { _ in
            signal.yield()
            try await Task.sleep(for: .seconds(3600))
        }
        try await AuthFixture.with(deviceFlow: DeviceFlowMode(), sleep: sleep) { fixture in
            let auth = fixture.vault.auth
            let login = Task { try await auth.performDeviceAuthorizationFlow { _ in } }
            var iterator = entered.makeAsyncIterator()
            _ = await iterator.next()
            login.cancel()
            let result = await login.result
            guard case .failure(let error) = result else {
                Issue.record("the login went on after cancellation")
                return
            }
            #expect((error as? VaultError)?.kind == .cancelled, "\(error)")
            #expect(await auth.isLoggedIn == false)
        }
    }

    @Test("DPoP applies to the device token requests as to the code flow's: the login is bound to its key")
    func dpopBound() async throws {
        let user = DeviceUser()
        let waits = WaitRecorder { number in if number == 1 { await user.act() } }
        try await AuthFixture.with(
            dpop: DPoPMode(requiresNonce: true),
            deviceFlow: DeviceFlowMode(),
            sleep: waits.sleep
        ) { fixture in
            waits.attach(fixture.clock)
            _ = try await fixture.vault.auth.performDeviceAuthorizationFlow { user.saw($0) }
            #expect(await fixture.vault.auth.refreshToken?.dpopKey != nil)
            #expect(try await fixture.vault.auth.getAccessToken().isDPoPBound)
        }
    }

    @Test("an issuer without device_authorization_endpoint: a configuration error that says so")
    func notOffered() async throws {
        try await AuthFixture.with { fixture in
            let error = await #expect(throws: VaultError.self) {
                try await fixture.vault.auth.performDeviceAuthorizationFlow { _ in }
            }
            #expect(error?.isConfigurationError == true)
            #expect(error?.description.contains("device_authorization_endpoint") == true)
        }
    }
}
