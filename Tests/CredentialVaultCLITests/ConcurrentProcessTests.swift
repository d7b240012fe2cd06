import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Two `credential-vault` processes on one store at once: the session lock, across processes.
@Suite("credential-vault: two processes logging in at once on one store", .tags(.cli, .races))
struct ConcurrentProcessTests {
    static let password = "correct horse"

    @Test("two processes logging in at once, round after round, both succeed and keep the token family alive")
    func twoProcessesLogIn() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let server = try #require(sandbox.server)
            let before = server.tokenRequests(grantType: "refresh_token")
            let rounds = 3
            for round in 1...rounds {
                async let first = sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
                async let second = sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
                for result in try await [first, second] {
                    #expect(result.status == 0, "round \(round): \(result.stderr)")
                    #expect(result.stdout.contains("Logged in as demo-user"))
                }
            }
            // Each login redeemed the token the other had stored: had one redeemed a token the other had already
            // rotated, the issuer would have revoked the family and this login would report it expired.
            #expect(server.tokenRequests(grantType: "refresh_token") - before == 2 * rounds)
            let after = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(after.status == 0, "\(after.stderr)")
        }
    }
}
