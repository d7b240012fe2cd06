import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `--max-age`, `--acr-values`, `--login-hint` and `--auth-param` on `credential-vault register`, against
/// KeyServiceMock: a fresh authentication goes through, a stale `auth_time` is refused in words.
@Suite("credential-vault register: step-up with --max-age, --acr-values, --login-hint, --auth-param", .tags(.cli))
struct StepUpCLITests {
    static let password = "step up password"

    /// A server whose id tokens say the user authenticated `age` seconds before the login.
    static func server(authenticationAge age: TimeInterval) -> KeyServiceMockConfiguration {
        var configuration = KeyServiceMockConfiguration()
        configuration.authenticationAge = age
        return configuration
    }

    @Test("a fresh authentication within --max-age registers, with the other step-up flags taken")
    func fresh() async throws {
        try await withSandbox(server: Self.server(authenticationAge: 5)) { sandbox in
            let register = try await sandbox.run(
                [
                    "register", "--unattended", "--password-stdin", "--max-age", "120", "--acr-values", "mfa",
                    "--login-hint", "demo", "--auth-param", "ui_locales=da", "--auth-param", "prompt=login",
                ],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
        }
    }

    @Test("whoami in a new process prints the login's acr (not one of --acr-values: said), amr and auth_time")
    func whoamiShowsLogin() async throws {
        try await withSandbox(server: Self.server(authenticationAge: 5)) { sandbox in
            sandbox.server?.authentication.set(acr: "silver", amr: ["pwd", "otp"])
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin", "--acr-values", "gold"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let whoami = try await sandbox.run(["whoami", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(whoami.status == 0, "\(whoami.stderr)")
            let line = try #require(
                whoami.stdout.split(separator: "\n").first { $0.hasPrefix("login ") },
                "\(whoami.stdout)"
            )
            #expect(line.contains("acr silver (not one of the acr_values asked for"), "\(line)")
            #expect(line.contains("amr pwd otp"), "\(line)")
            #expect(line.contains("auth_time 20"), "\(line)")
        }
    }

    @Test("a stale auth_time is refused in words, and nothing is stored")
    func stale() async throws {
        try await withSandbox(server: Self.server(authenticationAge: 3_600)) { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin", "--max-age", "60"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status != 0)
            #expect(register.stderr.contains("max_age"), "\(register.stderr)")
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") })
        }
    }

    @Test("--auth-param without '=' and a --max-age that is not a number are configuration errors (exit 78)")
    func malformed() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let issuer = ["--issuer", "https://issuer.example/realms/x"]
            let pair = try await sandbox.run(["register", "--unattended", "--auth-param", "novalue"] + issuer)
            #expect(pair.status == 78, "\(pair.stderr)")
            #expect(pair.stderr.contains("key=value"), "\(pair.stderr)")
            let age = try await sandbox.run(["register", "--unattended", "--max-age", "soon"] + issuer)
            #expect(age.status == 78, "\(age.stderr)")
            #expect(age.stderr.contains("max-age"), "\(age.stderr)")
        }
    }
}
