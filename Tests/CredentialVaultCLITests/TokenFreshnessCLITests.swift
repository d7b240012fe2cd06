import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `token --min-ttl SECONDS` and `--force-refresh`, through the agent and without it: the issuer's clock is a
/// ManualClock, set back to issue tokens that expire sooner (no test waits for a token to age).
@Suite("token --min-ttl and --force-refresh: a token valid long enough, refreshed only when needed", .tags(.cli))
struct TokenFreshnessCLITests {
    @Test("through the agent: a fresh token is served as it is, a short one refreshed once, an impossible one refused")
    func throughTheAgent() async throws {
        let log = RequestLog()
        let clock = ManualClock()
        var configuration = log.configuration()
        configuration.now = clock.dateProvider
        try await withSandbox(server: configuration) { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let first = try await Self.token(sandbox, [])
                var requests = log.tokenRequests

                #expect(try await Self.token(sandbox, ["--min-ttl", "100"]) == first, "300 s left: kept")
                #expect(log.tokenRequests == requests, "no request for a token that is valid long enough")

                let forced = try await Self.token(sandbox, ["--force-refresh"])
                #expect(forced != first)
                #expect(log.tokenRequests == requests + 1, "--force-refresh asks the issuer once")
                requests = log.tokenRequests

                // Tokens issued from now on expire 50 s after the real time.
                Self.set(clock, toRealTimePlus: -250)
                let short = try await Self.token(sandbox, ["--force-refresh"])
                requests = log.tokenRequests
                let refused = try await sandbox.run(["token", "--min-ttl", "100"])
                #expect(refused.status == 70, "\(refused.stderr)")
                #expect(refused.stdout.isEmpty)
                #expect(refused.stderr.contains("--min-ttl 100"), "\(refused.stderr)")
                #expect(!refused.stderr.contains(short), "the token is never in a message")
                #expect(log.tokenRequests == requests + 1, "one refresh, then it says the issuer cannot do it")

                Self.set(clock, toRealTimePlus: 0)
                requests = log.tokenRequests
                let long = try await Self.token(sandbox, ["--min-ttl", "100"])
                #expect(long != short)
                #expect(log.tokenRequests == requests + 1, "the short token was replaced once")
                #expect(try await Self.token(sandbox, ["--min-ttl", "100"]) == long)
                #expect(log.tokenRequests == requests + 1, "the new token is kept")

                let exec = try await sandbox.run([
                    "exec", "--min-ttl", "100", "--", "sh", "-c", "printf %s \"$ACCESS_TOKEN\"",
                ])
                #expect(exec.status == 0, "\(exec.stderr)")
                #expect(exec.stdout == long)
            }
        }
    }

    @Test("without the agent: the unlock's token is checked the same way")
    func withoutTheAgent() async throws {
        let clock = ManualClock()
        var configuration = KeyServiceMockConfiguration()
        configuration.now = clock.dateProvider
        try await withSandbox(server: configuration) { sandbox in
            try await AgentTests.register(sandbox)
            let password = "\(AgentTests.password)\n"
            let kept = try await sandbox.run(["token", "--password-stdin", "--min-ttl", "100"], stdin: password)
            #expect(kept.status == 0, "\(kept.stderr)")
            Self.set(clock, toRealTimePlus: -250)
            let refused = try await sandbox.run(["token", "--password-stdin", "--min-ttl", "100"], stdin: password)
            #expect(refused.status == 70, "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("--min-ttl 100"), "\(refused.stderr)")
            // 150 s left: enough for 60 s, however long this run takes to get there.
            Self.set(clock, toRealTimePlus: -150)
            let shorter = try await sandbox.run(["token", "--password-stdin", "--min-ttl", "60"], stdin: password)
            #expect(shorter.status == 0, "\(shorter.stderr)")
        }
    }

    @Test("--min-ttl takes 0 to 86400 seconds and does not go with --resource")
    func validation() async throws {
        try await withSandbox(withServer: false) { sandbox in
            for arguments in [
                ["token", "--min-ttl", "-1"], ["token", "--min-ttl", "86401"],
                ["token", "--min-ttl", "10", "--resource", "https://api.example/"],
            ] {
                let result = try await sandbox.run(arguments)
                #expect(result.status == 64, "\(arguments): \(result.stderr)")
            }
        }
    }

    /// Sets the issuer's clock `offset` seconds from the real time: its tokens (300 s) then expire `300 + offset`
    /// seconds after now, whatever time the test took to get here.
    static func set(_ clock: ManualClock, toRealTimePlus offset: TimeInterval) {
        clock.advance(by: Date().timeIntervalSince(clock.now) + offset)
    }

    /// The token `credential-vault token ARGUMENTS` prints, which must succeed.
    static func token(_ sandbox: CLISandbox, _ arguments: [String]) async throws -> String {
        let result = try await sandbox.run(["token"] + arguments)
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .newlines)
    }
}
