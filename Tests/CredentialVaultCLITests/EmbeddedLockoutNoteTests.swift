import Foundation
import Testing
import VaultTestSupport

/// The embedded key service keeps its state on the same disk as the sealed login: its lockout stops guessing
/// through it, not someone who has the device. `credential-vault register` says so, once, where it applies.
@Suite(
    "credential-vault register: the embedded default says its lockout does not protect against a thief of the device",
    .tags(.cli)
)
struct EmbeddedLockoutNoteTests {
    static let note = "its lockout after three wrong passwords does not protect against someone who has this device"

    @Test("register on the embedded default says it once on standard error, and what to configure instead")
    func embedded() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let register = try await sandbox.run(["register", "--password-stdin"], stdin: "correct horse\n")
            #expect(register.status == 0, "\(register.stderr)")
            let lines = register.stderr.split(separator: "\n").filter { $0.contains(Self.note) }
            #expect(lines.count == 1, "\(register.stderr)")
            #expect(lines.first?.contains("configure a real issuer and key service") == true, "\(register.stderr)")
            #expect(!register.stdout.contains(Self.note), "standard output stays for results")

            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "correct horse\n")
            #expect(token.status == 0, "\(token.stderr)")
            #expect(!token.stderr.contains(Self.note), "only register says it")
        }
    }

    @Test("register against a configured issuer does not say it")
    func configured() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "correct horse\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(!register.stderr.contains(Self.note), "\(register.stderr)")
        }
    }
}
