import Foundation
import KeyServiceMock
import Testing

/// `--max-age`, `--acr-values`, `--login-hint` and `--auth-param` on `credential-vault register`, against
/// KeyServiceMock: a fresh authentication goes through, a stale `auth_time` is refused in words.
@Suite("credential-vault register: step-up with --max-age, --acr-values, --login-hint, --auth-param")
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
