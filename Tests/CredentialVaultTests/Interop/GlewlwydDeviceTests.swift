import CredentialVault
import Foundation
import Synchronization
import Testing
import VaultTestSupport

/// The device authorization grant (RFC 8628) against a real server that offers it: glewlwyd 2.7.5 from Debian, over
/// https behind nginx, its device grant turned on through the admin API as an admin would (``Glewlwyd``). The user's
/// part, at the verification URI, is done as glewlwyd's login page does it in a browser (``GlewlwydUserAgent``).
///
/// Serialized: each test starts its own glewlwyd and nginx.
@Suite("device login against glewlwyd (interop)", .serialized)
struct GlewlwydDeviceTests {
    typealias Setup = GlewlwydDPoPTests.Setup

    /// The waits the device login asks for, in order, and the test's own choice of how long each really lasts.
    final class Waits: Sendable {
        private let asked = Mutex<[Duration]>([])
        /// How long wait `index` (from 0) really lasts, given what was asked.
        private let lasting: @Sendable (Int, Duration) async -> Duration

        init(lasting: @escaping @Sendable (Int, Duration) async -> Duration) {
            self.lasting = lasting
        }

        var all: [Duration] { asked.withLock { $0 } }

        func sleep(_ duration: Duration) async throws {
            let index = asked.withLock { asked in
                asked.append(duration)
                return asked.count - 1
            }
            try await Task.sleep(for: await lasting(index, duration))
        }
    }

    @Test(
        "polls glewlwyd early, hears slow_down, adds 5 s for that poll and every later one, and logs in once approved"
    )
    func slowDownIsCumulative() async throws {
        try await Setup.with { setup in
            let glewlwyd = setup.glewlwyd
            let shown = Mutex<DeviceAuthorization?>(nil)
            let approval = Mutex<Result<URL, any Error>?>(nil)
            // The first three polls come 0.2 s apart, well inside glewlwyd's interval, so it answers slow_down (it
            // compares with the previous poll, in whole seconds). Before the fourth the user approves the code at
            // the verification URI, and that wait lasts a whole interval (glewlwyd checks the interval it published,
            // not the longer one slow_down asks for), so the fourth poll gets the tokens.
            let waits = Waits { index, asked in
                guard index >= 3 else { return .milliseconds(200) }
                if index == 3, let authorization = shown.withLock({ $0 }) {
                    let page = authorization.verificationURIComplete ?? authorization.verificationURI
                    let result: Result<URL, any Error>
                    do {
                        result = .success(try await glewlwyd.driveLogin(authorizationURL: page))
                    } catch {
                        result = .failure(error)
                    }
                    approval.withLock { $0 = result }
                }
                return .seconds(shown.withLock { $0?.interval ?? 5 }) + .milliseconds(1200)
            }
            let vault = try setup.vault(sleep: { try await waits.sleep($0) })
            let userId = try await vault.auth.performDeviceAuthorizationFlow(maximumPolls: 8) { authorization in
                shown.withLock { $0 = authorization }
            }
            #expect(!userId.isEmpty)
            _ = try #require(try approval.withLock { $0 }?.get(), "the user's approval at the verification URI")
            #expect(try await vault.auth.getAccessToken().userId == userId)

            // What glewlwyd answered each poll, in order, and the waits the login asked for before each.
            let polls = setup.tokenExchanges.filter {
                String(decoding: $0.request.body ?? Data(), as: UTF8.self).contains("device_code")
            }
            let answers = polls.map { GlewlwydDPoPTests.json($0.response)["error"] as? String ?? "tokens" }
            let slowDowns = answers.filter { $0 == "slow_down" }.count
            #expect(slowDowns >= 2, "glewlwyd's answers: \(answers)")
            #expect(answers.last == "tokens", "\(answers)")
            let interval = try #require(shown.withLock { $0 }).interval
            // RFC 8628 section 3.5: the interval glewlwyd gave, plus 5 s for every slow_down heard before the poll.
            var expected: [Duration] = []
            var current = interval
            for answer in answers {
                expected.append(.seconds(current))
                if answer == "slow_down" { current += 5 }
            }
            #expect(waits.all == expected, "glewlwyd's answers: \(answers)")
        }
    }
}
