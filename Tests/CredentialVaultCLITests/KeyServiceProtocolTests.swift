import Foundation
import Testing
import VaultTestSupport

/// The CLI's `keyServiceProtocol` setting: v2 makes new passwords' keys speak protocol v2 (the envelope says so);
/// a login keeps its protocol; anything but v1 or v2 is a configuration error.
@Suite("credential-vault: the key-service protocol of new passwords", .tags(.cli))
struct KeyServiceProtocolTests {
    static let password = "correct horse\n"

    @Test("CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL=v2: register seals a v2 login, which token opens, and passwd keeps v2")
    func version2() async throws {
        try await withSandbox { sandbox in
            let v2 = ["CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL": "v2"]
            let config = try await sandbox.run(["config"], environment: v2)
            #expect(config.stdout.contains("key-service-protocol"), "\(config.stdout)")
            #expect(config.stdout.contains("v2"), "\(config.stdout)")
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: Self.password,
                environment: v2
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(try Self.envelopeProtocols(sandbox) == [2])
            // Without the setting, the stored v2 login still opens: it names its own protocol.
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: Self.password)
            #expect(token.status == 0, "\(token.stderr)")
            #expect(!token.stdout.isEmpty)
        }
    }

    @Test("a v1 login moves to v2 at passwd when v2 is configured")
    func movesAtPasswd() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: Self.password
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(try Self.envelopeProtocols(sandbox) == [1])
            let passwd = try await sandbox.run(
                ["passwd", "--password-stdin"],
                stdin: "correct horse\nbattery staple\nbattery staple\n",
                environment: ["CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL": "v2"]
            )
            #expect(passwd.status == 0, "\(passwd.stderr)")
            #expect(try Self.envelopeProtocols(sandbox) == [2])
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "battery staple\n")
            #expect(token.status == 0, "\(token.stderr)")
        }
    }

    @Test("a protocol other than v1 or v2 is a configuration error that names where it came from")
    func unknown() async throws {
        try await withSandbox { sandbox in
            let run = try await sandbox.run(
                ["token", "--password-stdin"],
                stdin: Self.password,
                environment: ["CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL": "v3"]
            )
            #expect(run.status == 78, "\(run.stderr)")
            #expect(run.stderr.contains("must be v1 or v2"), "\(run.stderr)")
            #expect(run.stderr.contains("CREDENTIAL_VAULT_KEY_SERVICE_PROTOCOL"), "\(run.stderr)")
        }
    }

    /// The key-service protocol each envelope in the store names (1 when it names none).
    static func envelopeProtocols(_ sandbox: CLISandbox) throws -> [Int] {
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.store.path).filter {
            $0.hasSuffix(".vault")
        }
        return try names.map { name in
            let data = try Data(contentsOf: sandbox.store.appending(path: name))
            let header = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return header["keyServiceProtocol"] as? Int ?? 1
        }
    }
}
