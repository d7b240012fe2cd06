import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `credential-vault token --resource URL [--scope S ...] [--token-exchange]` over the built binary and
/// KeyServiceMock.
@Suite("credential-vault token --resource: a token for one API", .tags(.cli))
struct TokenResourceTests {
    static let password = "correct horse"
    static let api = "https://api.example.com/fhir"

    @Test("--resource with --scope prints one token whose aud is the resource; --token-exchange makes one exchange")
    func resource() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let server = try #require(sandbox.server)

            let scoped = try await sandbox.run(
                ["token", "--resource", Self.api, "--scope", "openid", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(scoped.status == 0, "\(scoped.stderr)")
            let lines = scoped.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 2 && lines[1].isEmpty, "stdout is exactly one line")
            let jwt = try JWT(token: String(lines[0]))
            #expect(jwt["aud"] as String? == Self.api)
            #expect(jwt["scope"] as String? == "openid")
            #expect(!scoped.stderr.contains(String(lines[0])), "the token appears on stdout only")

            // The rotated refresh token was sealed: the next login opens the stored one.
            let plain = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(
                try JWT(token: plain.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["aud"] as String?
                    != Self.api
            )

            let exchanged = try await sandbox.run(
                ["token", "--resource", Self.api, "--token-exchange", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(exchanged.status == 0, "\(exchanged.stderr)")
            let exchangedJWT = try JWT(token: exchanged.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(exchangedJWT["aud"] as String? == Self.api)
            #expect(server.tokenRequests(grantType: "urn:ietf:params:oauth:grant-type:token-exchange") == 1)
        }
    }

    @Test("a resource the issuer refuses says so in words; --scope without --resource is a usage error")
    func refused() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let refused = try await sandbox.run(
                ["token", "--resource", "http://api.example.com/", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(refused.status != 0)
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("refused the resource"), "\(refused.stderr)")
            let usage = try await sandbox.run(["token", "--scope", "openid"])
            #expect(usage.status == 64, "\(usage.stderr)")
        }
    }
}
